//! The macros generated code uses to implement its string enums and unions, so every generated
//! enum shares one implementation instead of a copy of it.
//!
//! - `open_string_enum!(Name { Variant = "value", ... })`: for an enum with the listed unit
//!   variants plus `Other(String)`. Serializes as the plain string; any string deserializes
//!   (unknown ones into `Other`). `From<&str>`/`From<String>` always pick the named variant for a
//!   known value, so `Other` never holds a known value unless built by hand.
//! - `closed_string_enum!(Name { ... })`: the same without `Other`; an unknown value is refused.
//! - `open_union!(Name { Variant = "written-tag" | "accepted-tag", ... })`: for an enum of
//!   newtype variants plus `Other(Map)`, tagged by `$type` inside the object. The first tag is the
//!   one written; every listed tag is accepted; an unknown tag deserializes into `Other` with its
//!   `$type` kept.
//! - `closed_union!(Name { ... })`: the same without `Other`; an unknown tag is refused.

/// Implements an open string enum (see the module docs).
macro_rules! open_string_enum {
    ($name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        impl $name {
            /// Every value with a known meaning, in lexicon order.
            pub const KNOWN: &'static [&'static str] = &[$($value),*];

            /// The value as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                    Self::Other(value) => value,
                }
            }

            /// False for a value this version does not know.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $($value => Self::$variant,)*
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $($value => Self::$variant,)*
                    _ => Self::Other(value),
                }
            }
        }

        $crate::macros::string_enum_common!($name);

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <String as serde::Deserialize>::deserialize(deserializer).map(Self::from)
            }
        }
    };
}
pub(crate) use open_string_enum;

/// Implements a closed string enum (see the module docs).
// No lexicon of ours has a closed `enum` yet; the tests below keep this working for when one does.
#[allow(unused_macros)]
macro_rules! closed_string_enum {
    ($name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        impl $name {
            /// Every allowed value, in lexicon order.
            pub const KNOWN: &'static [&'static str] = &[$($value),*];

            /// The value as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::macros::UnknownValue;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                match value {
                    $($value => Ok(Self::$variant),)*
                    other => Err($crate::macros::UnknownValue {
                        value: other.to_owned(),
                        allowed: Self::KNOWN,
                    }),
                }
            }
        }

        $crate::macros::string_enum_common!($name);

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <String as serde::Deserialize>::deserialize(deserializer)?;
                value.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use closed_string_enum;

/// `Display` and `Serialize` through `as_str`, shared by both string enum kinds.
macro_rules! string_enum_common {
    ($name:ident) => {
        impl std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use string_enum_common;

/// Implements an open union (see the module docs).
macro_rules! open_union {
    ($name:ident { $($variant:ident = $tag:literal $(| $alias:literal)*),* $(,)? }) => {
        impl $name {
            /// The `$type` this value is written with.
            pub fn type_tag(&self) -> &str {
                match self {
                    $(Self::$variant(_) => $tag,)*
                    Self::Other(object) => $crate::union::tag_of(object),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(inner) => $crate::union::serialize_tagged(inner, $tag, serializer),)*
                    Self::Other(object) => serde::Serialize::serialize(object, serializer),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let (tag, object) = $crate::union::split_tagged(deserializer)?;
                match tag.as_str() {
                    $($tag $(| $alias)* => $crate::union::from_object(object).map(Self::$variant),)*
                    _ => Ok(Self::Other($crate::union::with_tag(&tag, object))),
                }
            }
        }
    };
}
pub(crate) use open_union;

/// Implements a closed union (see the module docs).
// No lexicon of ours has a closed union yet; the tests below keep this working for when one does.
#[allow(unused_macros)]
macro_rules! closed_union {
    ($name:ident { $($variant:ident = $tag:literal $(| $alias:literal)*),* $(,)? }) => {
        impl $name {
            /// Every `$type` this union accepts.
            pub const TAGS: &'static [&'static str] = &[$($tag $(, $alias)*),*];

            /// The `$type` this value is written with.
            pub fn type_tag(&self) -> &str {
                match self {
                    $(Self::$variant(_) => $tag,)*
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(inner) => $crate::union::serialize_tagged(inner, $tag, serializer),)*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let (tag, object) = $crate::union::split_tagged(deserializer)?;
                match tag.as_str() {
                    $($tag $(| $alias)* => $crate::union::from_object(object).map(Self::$variant),)*
                    _ => Err($crate::union::unknown_tag(&tag, Self::TAGS)),
                }
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use closed_union;

/// A value outside a closed string enum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {value:?}; allowed: {allowed:?}")]
pub struct UnknownValue {
    /// The value found.
    pub value: String,
    /// The allowed values.
    pub allowed: &'static [&'static str],
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    enum Color {
        Red,
        Blue,
    }
    closed_string_enum!(Color { Red = "red", Blue = "blue" });

    #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
    struct Dot {
        x: i64,
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Shape {
        Dot(Dot),
    }
    closed_union!(Shape { Dot = "com.example.shape#dot" | "#dot" });

    #[test]
    fn a_closed_string_enum_refuses_unknown_values() {
        assert_eq!(
            serde_json::from_value::<Color>(json!("blue")).ok(),
            Some(Color::Blue)
        );
        assert!(serde_json::from_value::<Color>(json!("green")).is_err());
        assert_eq!(serde_json::to_value(Color::Red).ok(), Some(json!("red")));
        assert_eq!("red".parse::<Color>().ok(), Some(Color::Red));
    }

    #[test]
    fn a_closed_union_accepts_its_tags_and_refuses_others() {
        let short: Result<Shape, _> = serde_json::from_value(json!({"$type": "#dot", "x": 1}));
        assert_eq!(short.ok(), Some(Shape::Dot(Dot { x: 1 })));
        assert!(serde_json::from_value::<Shape>(json!({"$type": "#square", "x": 1})).is_err());
        let written = serde_json::to_value(Shape::Dot(Dot { x: 2 })).ok();
        assert_eq!(
            written,
            Some(json!({"$type": "com.example.shape#dot", "x": 2}))
        );
        assert_eq!(Shape::TAGS, ["com.example.shape#dot", "#dot"]);
        assert_eq!(
            Shape::Dot(Dot::default()).type_tag(),
            "com.example.shape#dot"
        );
    }
}
