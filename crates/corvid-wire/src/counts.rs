//! The reading machinery every dialect's `usage.rs` shares: a token count that deserialises
//! without building a `Value`, and finding a usage object inside a whole reply without parsing
//! the rest. The dialect modules say which fields mean what; this module only reads numbers.
//!
//! Typed reads matter on the pass-through path, where the gateway reads usage off every relayed
//! reply: typed, with the object found by `memmem`, usage reading fell from 16k to 5k
//! instructions per request against building a `Value` (corvid-bench README).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::sse::Marker;

/// A token count as the upstream wrote it. Anything but a non-negative integer reads as 0, as
/// a missing count does: an odd field must not cost the request its usage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Count(pub(crate) u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CountVisitor)
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a token count")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Count, E> {
        Ok(Count(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Count, E> {
        Ok(Count(u64::try_from(value).unwrap_or(0)))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_none<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Count, D::Error> {
        Count::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Count(0))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Count(0))
    }
}

/// `{"usage": …}`: the wrapper several dialects' events share.
#[derive(Deserialize)]
pub(crate) struct WithUsage<T> {
    pub(crate) usage: Option<T>,
}

/// One event's JSON read as `T`; `None` when it is not JSON of that shape.
pub(crate) fn event<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> Option<T> {
    serde_json::from_slice(payload).ok()
}

/// The object under the last `key` of a whole reply, read as `T`. Only that object is parsed:
/// it is found by its key, searching from the end where providers put it (a quoted key can
/// only be a key — quotes inside JSON strings are escaped).
pub(crate) fn in_body<'a, T: Deserialize<'a>>(key: &Marker, body: &'a [u8]) -> Option<T> {
    let rest = body[key.end_of_last(body)?..].trim_ascii_start();
    let object = rest.strip_prefix(b":")?.trim_ascii_start();
    if !object.starts_with(b"{") {
        return None;
    }
    first_value(object)
}

/// The first JSON value in `bytes`, ignoring whatever follows it. Read from a `&str`, checked
/// for UTF-8 once, so the parser does not check each key again.
fn first_value<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // Whatever follows the value may be cut or broken; the value itself must not be.
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).ok()?,
    };
    serde_json::Deserializer::from_str(text)
        .into_iter::<T>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests;
