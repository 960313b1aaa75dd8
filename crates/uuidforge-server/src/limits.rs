//! What keeps slow and many clients from holding the server, as the HTTP
//! servers people trust do (nginx's `client_header_timeout`,
//! `client_body_timeout` and `worker_connections`, hyper's header read
//! timeout):
//!
//! - **a cap on open connections** ([`Limits::max_connections`]): one more
//!   is answered `503` with the JSON error body and closed at once;
//! - **a header read timeout** ([`Limits::header_timeout`]): a connection
//!   whose request head (or next request, kept alive) has not arrived by
//!   then is closed;
//! - **a body deadline** ([`Limits::body_timeout`], a whole body, not one
//!   read) and **a budget of body bytes in flight**
//!   ([`Limits::max_buffered_bytes`]): a body is read whole before its
//!   request takes a place among the requests handled at once, so slow
//!   uploads wait outside the concurrency limit and never starve short
//!   requests; `/healthz` and `/metrics` are outside it altogether;
//! - **memory given back** after a load: when the last of many
//!   connections closes, the allocator returns its free pages to the
//!   system (`malloc_trim`);
//! - **refusals in JSON**: hyper answers a request it cannot parse (a bad
//!   header byte, a negative or repeated `Content-Length`, a head too
//!   large, HTTP/0.9) itself, with an empty body; [`JsonRefusals`] gives
//!   those answers the API's JSON error body too.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::Semaphore;

/// The server's bounds on clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; one more is refused (503).
    pub max_connections: usize,
    /// Time for a request's head to arrive (the first, or the next on a
    /// connection kept alive).
    pub header_timeout: Duration,
    /// Time for a request's whole body to arrive (408 after it).
    pub body_timeout: Duration,
    /// Bytes of request bodies being read at once, over all connections
    /// (503 past it).
    pub max_buffered_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 4096,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_buffered_bytes: 64 << 20,
        }
    }
}

/// The longest path and query accepted, in bytes (414 past it): room for
/// the longest query the API declares, 1 000 names looked up at once in
/// their longest form (URN, 45 characters), about 46 000 bytes.
pub const MAX_URI_BYTES: usize = 48 << 10;

/// The largest request head accepted: header names and values together,
/// in bytes (431 past it).
pub const MAX_HEAD_BYTES: usize = 16 << 10;

/// The most a connection buffers while it reads a request head: the
/// longest path and query, the largest headers, and room for the request
/// line's and the header lines' own bytes. A head that does not fit is
/// refused by hyper (431, given the JSON body by [`JsonRefusals`]).
pub const MAX_HEAD_BUFFER: usize = MAX_URI_BYTES + MAX_HEAD_BYTES + (8 << 10);

/// Refuses a request whose path and query or whose headers are larger
/// than the server takes, with the JSON error body (hyper refuses a head
/// that does not fit its buffer; this, one that does).
pub async fn bounded_head(request: Request, next: Next) -> Response {
    let uri = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if uri > MAX_URI_BYTES {
        return ApiError::with_status(
            StatusCode::URI_TOO_LONG,
            "path",
            format!("{uri} bytes"),
            format!("a path and query of at most {MAX_URI_BYTES} bytes"),
        )
        .into_response();
    }
    let head: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if head > MAX_HEAD_BYTES {
        return ApiError::with_status(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers",
            format!("{head} bytes"),
            format!("request headers of at most {MAX_HEAD_BYTES} bytes"),
        )
        .into_response();
    }
    next.run(request).await
}

/// The body budget shared by every request: permits are bytes.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    bytes: Arc<Semaphore>,
}

impl BodyBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> BodyBudget {
        BodyBudget {
            bytes: Arc::new(Semaphore::new(bytes.min(Semaphore::MAX_PERMITS))),
        }
    }
}

/// What reading a body ran into.
fn refused(status: StatusCode, value: impl Into<String>, expected: &str) -> Response {
    ApiError::with_status(status, "body", value, expected).into_response()
}

/// Reads the whole request body within `timeout` and the body budget,
/// at most `max` bytes, before the request goes on (into the concurrency
/// limit): the handler gets the bytes already read.
pub async fn read_body_first(
    budget: BodyBudget,
    max: usize,
    timeout: Duration,
    request: Request,
    next: Next,
) -> Response {
    let (parts, mut body) = request.into_parts();
    let mut held = Vec::new();
    let mut permits = Vec::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                refused(
                    StatusCode::BAD_REQUEST,
                    "(not read)",
                    &format!("a body that arrives whole ({e})"),
                )
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if held.len() + data.len() > max {
                return Err(refused(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("more than {max} bytes"),
                    &format!("a body of at most {max} bytes"),
                ));
            }
            let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
            match budget.bytes.clone().try_acquire_many_owned(n) {
                Ok(p) => permits.push(p),
                Err(_) => {
                    return Err(ApiError::with_status(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "body",
                        "(not read)",
                        "a moment when fewer bodies are being sent to the server (try again)",
                    )
                    .into_response())
                }
            }
            held.extend_from_slice(&data);
        }
        Ok(())
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(())) => {}
        Ok(Err(response)) => return response,
        Err(_) => {
            return refused(
                StatusCode::REQUEST_TIMEOUT,
                format!("{} bytes in {} s", held.len(), timeout.as_secs()),
                &format!("a whole body within {} s", timeout.as_secs()),
            )
        }
    }
    // The bytes stay counted until the request is answered.
    let response = next.run(Request::from_parts(parts, Body::from(held))).await;
    drop(permits);
    response
}

/// Open connections, and the most since memory was last given back.
#[derive(Debug, Default)]
pub struct Connections {
    open: AtomicUsize,
    peak: AtomicUsize,
}

impl Connections {
    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// A connection closed: when it was the last of many, the allocator
    /// gives its free memory back.
    fn closed(&self) {
        if self.open.fetch_sub(1, Ordering::Relaxed) == 1
            && self.peak.swap(0, Ordering::Relaxed) >= TRIM_AFTER
        {
            give_memory_back();
        }
    }
}

/// Connections at once after which the last one closing trims the heap.
const TRIM_AFTER: usize = 64;

/// Returns the allocator's free pages to the system (glibc keeps them for
/// reuse: after a burst of connections the process would stay at its
/// peak).
fn give_memory_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A connection past the cap: answered 503 with the JSON body, closed.
pub async fn refuse_connection(mut stream: tokio::net::TcpStream, max: usize) {
    let body = serde_json::json!({"error": {
        "field": "connection",
        "value": format!("more than {max} connections"),
        "expected": "fewer connections at once (try again)",
    }})
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// The connection counted while it lives.
pub struct Counted(Arc<Connections>);

impl Counted {
    /// Counts a connection of `connections`.
    pub fn new(connections: Arc<Connections>) -> Counted {
        connections.opened();
        Counted(connections)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.closed();
    }
}

/// A connection whose answers to requests hyper could not parse (which
/// hyper writes itself: a status line and `content-length: 0`) carry the
/// API's JSON error body. Writes are not vectored, so each response head
/// reaches [`AsyncWrite::poll_write`] whole.
pub struct JsonRefusals<T> {
    inner: T,
    pending: Vec<u8>,
}

impl<T> JsonRefusals<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> JsonRefusals<T> {
        JsonRefusals {
            inner,
            pending: Vec::new(),
        }
    }
}

/// The JSON answer replacing hyper's bare `head` of a request it could not
/// parse, or none for any other write.
fn json_refusal(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let (status, expected) = match text.get(..12)? {
        "HTTP/1.1 400" | "HTTP/1.0 400" => (
            "400 Bad Request",
            "an HTTP/1.1 request: a request line with a version, header names and values of visible characters, one Content-Length of digits",
        ),
        "HTTP/1.1 414" | "HTTP/1.0 414" => ("414 URI Too Long", "a shorter path and query"),
        "HTTP/1.1 431" | "HTTP/1.0 431" => (
            "431 Request Header Fields Too Large",
            "a request head of at most a few kilobytes",
        ),
        _ => return None,
    };
    let lower = text.to_ascii_lowercase();
    if !lower.contains("\r\ncontent-length: 0\r\n") || lower.contains("\r\ncontent-type:") {
        return None;
    }
    let body = serde_json::json!({"error": {
        "field": "request",
        "value": "(not parsed)",
        "expected": expected,
    }})
    .to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<T: AsyncWrite + Unpin> JsonRefusals<T> {
    /// Writes what a refusal left pending.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let n = std::task::ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for JsonRefusals<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for JsonRefusals<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.poll_pending(cx))?;
        if let Some(answer) = json_refusal(buf) {
            self.pending = answer;
            let _ = self.poll_pending(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hyper_bare_refusals_get_a_json_body() {
        let bare = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Fri, 27 Nov 2026 10:00:00 GMT\r\n\r\n";
        let answer = String::from_utf8(json_refusal(bare).unwrap()).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n")
        );
        let body = answer.split("\r\n\r\n").nth(1).unwrap();
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["error"]["field"], "request");
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(json_refusal(ours).is_none());
        assert!(json_refusal(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(json_refusal(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n"
        )
        .is_some());
    }
}
