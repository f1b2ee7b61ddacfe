//! The bytes writer against the value: on any reply, `encode_response_body` writes exactly the
//! text of `encode_response`'s value.

use proptest::prelude::*;

use super::encode_response_body;
use crate::openai_chat::encode_response;
use crate::reply_strategies::{response, text};

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn writes_the_text_of_the_value(response in response(), model in text()) {
        let bytes = encode_response_body(&response, &model);
        let value = serde_json::to_vec(&encode_response(&response, &model)).unwrap();
        prop_assert_eq!(String::from_utf8(bytes).unwrap(), String::from_utf8(value).unwrap());
    }
}
