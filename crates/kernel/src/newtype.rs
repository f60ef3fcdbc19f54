//! The shared shape of validated text types ([`crate::name::Name`], [`crate::object::Uid`],
//! [`crate::rkey::Rkey`]): a `String` that exists only once `parse` accepted it.
//!
//! Invariant: the only way in is `parse` (directly, or through serde's `try_from = "String"`),
//! so a value of such a type is always valid; `Debug` shows the type and the text.

/// Implements `as_str`, `TryFrom<String>` (through `parse`), `From<T> for String`, `Display`
/// and `Debug` for a tuple struct over one `String` with `fn parse(&str) -> Result<Self, $error>`.
macro_rules! text_newtype {
    ($type:ident, $error:ty) => {
        impl $type {
            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $type {
            type Error = $error;

            fn try_from(text: String) -> Result<Self, Self::Error> {
                Self::parse(&text)
            }
        }

        impl From<$type> for String {
            fn from(value: $type) -> Self {
                value.0
            }
        }

        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($type), self.0)
            }
        }
    };
}

pub(crate) use text_newtype;
