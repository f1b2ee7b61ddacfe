//! The gemini codec (see CODECS.md).
