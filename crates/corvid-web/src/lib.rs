//! The agent's reach onto the web: `web_fetch` (a URL to readable markdown) and `web_search`
//! (a configured backend), as one tool source.
//!
//! Layout:
//! - [`guard`]: which URLs and addresses may be fetched (loopback, private, link-local and
//!   metadata refused unless `[web]` allows them).
//! - [`net`]: name lookup and TCP connect behind a trait, so the fetch connects only to the
//!   addresses the guard checked, and tests never touch the network.
//! - `client`: one HTTP/1.1 request to a checked address, body capped.
//! - [`fetch`]: redirects followed by hand, each hop re-checked; content types; `page` and
//!   `html` turn the body into text and markdown.
//! - [`search`]: SearXNG, Brave and Tavily.
//! - [`tools`]: the two tools as the model sees them, their arguments, proposals and results.
//! - [`source`]: the tools as one tool source for the agent ([`WebPlugin`]).
//!
//! A crate of its own so corvid-tools stays free of an HTTP client and TLS: only the binary that
//! offers the web tools links them.

mod client;
pub mod fetch;
pub mod guard;
mod html;
pub mod net;
mod page;
pub mod search;
pub mod source;
pub mod tools;

pub use client::RequestError;
pub use fetch::{FetchError, Fetched, Fetcher};
pub use guard::{AddressClass, Guard, Refusal};
pub use net::{Network, SystemNetwork};
pub use page::{Page, PageKind};
pub use search::{ApiKey, Backend, BackendError, Hit, SearchError, Searcher};
pub use source::WebPlugin;
pub use tools::{WebCallError, WebTools};
