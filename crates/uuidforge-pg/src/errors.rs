//! Errors raised to the client: each names the function or type, the
//! offending value and what was expected, under a specific SQLSTATE.

use pgrx::prelude::*;
use std::fmt::Display;

/// 22P02 `invalid_text_representation`: text that is not a value of `type_name`.
pub fn invalid_text(type_name: &str, value: &str, reason: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {type_name}: \"{value}\""),
        reason.to_string(),
    );
}

/// 22P03 `invalid_binary_representation`: bytes that are not a value of `type_name`.
pub fn invalid_binary(type_name: &str, reason: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        format!("invalid binary representation of type {type_name}"),
        reason.to_string(),
    );
}

/// 22008 `datetime_field_overflow`: a time outside the UUIDv7 range.
pub fn time_out_of_range(function: &str, what: impl Display, expected: &str) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        format!("{function}: {what} is out of range"),
        format!("expected {expected}"),
    );
}

/// 22023 `invalid_parameter_value`: an argument outside its domain.
pub fn invalid_argument(
    function: &str,
    argument: &str,
    value: impl Display,
    expected: impl Display,
) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("{function}: {argument} = {value} is invalid"),
        format!("expected {expected}"),
    );
}
