//! What went wrong in a database tool, typed: the error type every store's
//! tools share ([`uuidforge_store::error`]).

pub use uuidforge_store::error::*;
