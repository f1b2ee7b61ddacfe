//! One entry of `tools`, read in one pass: each field kept in order, as its raw text, except
//! `description` (usually the longest string of a tool), read straight into text. A function
//! tool takes its fields from there; a server tool is rebuilt as the value the tree reads.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::borrowed::Text;
use crate::model::{RawJson, Tool};

/// A tool's fields, in order, repeats included.
pub(super) struct ToolEntry<'a>(Vec<(Text<'a>, Field<'a>)>);

enum Field<'a> {
    Raw(&'a RawValue),
    Text(Text<'a>),
    /// A `description` that is not a string.
    Value(Value),
}

/// What the entry is: a function tool, or a server tool (any entry without `input_schema`,
/// or with a `type` other than `custom`) kept whole. `None` when the tree must read it.
pub(super) enum Entry {
    Function(Tool),
    Server(Value),
}

impl<'a> ToolEntry<'a> {
    pub(super) fn read(self) -> Option<Entry> {
        let fields = &self.0;
        // A repeated key: the tree reads the last one; leave it to the tree.
        for (at, (key, _)) in fields.iter().enumerate() {
            if fields[at + 1..].iter().any(|(later, _)| later == key) {
                return None;
            }
        }
        let get = |name: &str| {
            fields
                .iter()
                .find(|(key, _)| key.as_str() == name)
                .map(|(_, field)| field)
        };
        // As `Value::as_str` on `type`: anything but a string reads as no type.
        let kind = match get("type") {
            Some(Field::Raw(raw)) if raw.get().starts_with('"') => {
                Some(serde_json::from_str::<Text<'_>>(raw.get()).ok()?)
            }
            _ => None,
        };
        let custom = matches!(kind.as_ref().map(Text::as_str), None | Some("custom"));
        let schema = match get("input_schema") {
            Some(Field::Raw(raw)) if custom => *raw,
            _ => return self.server().map(Entry::Server),
        };
        let name = match get("name") {
            Some(Field::Raw(raw)) if raw.get().starts_with('"') => {
                serde_json::from_str::<Text<'_>>(raw.get()).ok()?
            }
            // Missing or not a string: the tree words the error.
            _ => return None,
        };
        let description = match get("description") {
            Some(Field::Text(text)) => Some(text.as_str().to_owned()),
            _ => None,
        };
        let strict = match get("strict") {
            Some(Field::Raw(raw)) if raw.get() == "true" => Some(true),
            Some(Field::Raw(raw)) if raw.get() == "false" => Some(false),
            _ => None,
        };
        Some(Entry::Function(Tool {
            name: name.into_string(),
            description,
            parameters: RawJson::from_raw(schema),
            strict,
        }))
    }

    /// The entry as a value, fields in their order.
    fn server(self) -> Option<Value> {
        let mut object = Map::new();
        for (key, field) in self.0 {
            let value = match field {
                Field::Raw(raw) => serde_json::from_str(raw.get()).ok()?,
                Field::Text(text) => Value::String(text.into_string()),
                Field::Value(value) => value,
            };
            object.insert(key.into_string(), value);
        }
        Some(Value::Object(object))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ToolEntry<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = ToolEntry<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a tool object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::with_capacity(4);
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    let field = if key.as_str() == "description" {
                        map.next_value::<Description<'de>>()?.0
                    } else {
                        Field::Raw(map.next_value()?)
                    };
                    fields.push((key, field));
                }
                Ok(ToolEntry(fields))
            }
        }
        deserializer.deserialize_map(EntryVisitor)
    }
}

/// A `description`: text when it is a string (the usual case, read once), else its value.
struct Description<'a>(Field<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Description<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DescriptionVisitor;
        impl<'de> Visitor<'de> for DescriptionVisitor {
            type Value = Description<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Description(Field::Text(Text(text.into()))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Description(Field::Text(Text(text.to_owned().into()))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Description(Field::Text(Text(text.into()))))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
                Ok(Description(Field::Value(Value::Bool(value))))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
                Ok(Description(Field::Value(Value::from(value))))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
                Ok(Description(Field::Value(Value::from(value))))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
                Ok(Description(Field::Value(Value::from(value))))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Description(Field::Value(Value::Null)))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(|value| Description(Field::Value(value)))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|value| Description(Field::Value(value)))
            }
        }
        deserializer.deserialize_any(DescriptionVisitor)
    }
}
