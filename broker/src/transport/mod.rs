//! The transports: MCP over stdio (one client, line-framed) and over
//! Streamable HTTP (many connections, authenticated).

pub mod http;
pub mod stdio;
