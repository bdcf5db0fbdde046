//! The metrics endpoint the CLI's long-running commands serve
//! (`--metrics-listen`): `GET /metrics`, OpenMetrics text.

use std::net::SocketAddr;

use crate::error::CliError;

/// Serves `render()` as OpenMetrics text at `GET /metrics` on `address`
/// (loopback, or an address the operator chose) from a background thread
/// for the life of the process. Returns the bound address (port 0 picks one).
///
/// Errors: the address cannot be bound.
pub(crate) fn serve_metrics(
    address: SocketAddr,
    render: impl Fn() -> String + Send + 'static,
) -> Result<SocketAddr, CliError> {
    let server = tiny_http::Server::http(address)
        .map_err(|e| CliError::Membership(format!("cannot serve metrics on {address}: {e}")))?;
    let bound = server.server_addr().to_ip().unwrap_or(address);
    let content_type = tiny_http::Header::from_bytes(
        &b"Content-Type"[..],
        &b"application/openmetrics-text; version=1.0.0; charset=utf-8"[..],
    )
    .expect("a valid header");
    std::thread::Builder::new().name("shardring-metrics".into()).spawn(move || {
        for request in server.incoming_requests() {
            let response = if request.url() == "/metrics" {
                tiny_http::Response::from_string(render()).with_header(content_type.clone())
            } else {
                tiny_http::Response::from_string("not found: try /metrics\n").with_status_code(404)
            };
            let _ = request.respond(response);
        }
    })?;
    Ok(bound)
}
