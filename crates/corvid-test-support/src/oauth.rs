//! A mock OAuth 2.0 server (authorize, token, device code); filled in by the auth work.
