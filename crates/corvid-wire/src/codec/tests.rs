//! The bytes writers against their oracles: for every dialect whose whole reply is written
//! straight to bytes, on any reply, the bytes are exactly the text of that dialect's `Value`
//! encoder.

use proptest::prelude::*;

use crate::model::ChatResponse;
use crate::reply_strategies::{response, text};
use crate::{anthropic, openai_chat, openai_responses};

type BytesWriter = fn(&ChatResponse, &str) -> Vec<u8>;
type ValueEncoder = fn(&ChatResponse, &str) -> serde_json::Value;

const WRITERS: [(&str, BytesWriter, ValueEncoder); 3] = [
    (
        "chat",
        openai_chat::encode_response_body,
        openai_chat::encode_response,
    ),
    (
        "anthropic",
        anthropic::encode_response_body,
        anthropic::encode_response,
    ),
    (
        "responses",
        openai_responses::encode_response_body,
        openai_responses::encode_response,
    ),
];

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn each_bytes_writer_writes_the_text_of_its_value(response in response(), model in text()) {
        for (dialect, bytes, value) in WRITERS {
            let written = String::from_utf8(bytes(&response, &model)).unwrap();
            let expected = serde_json::to_string(&value(&response, &model)).unwrap();
            prop_assert_eq!(written, expected, "{}", dialect);
        }
    }
}
