//! Collects every error of one expansion, each spanned at the offending tokens.

use std::cell::RefCell;

use quote::ToTokens;

/// Errors found so far. Dropping it unchecked is a bug (it panics), so no
/// error can be lost.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error at `tokens`.
    pub fn error_spanned_by(&self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("errors are recorded before check")
            .push(error);
    }

    /// All errors, combined, if any.
    pub fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().expect("checked once");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("a Ctxt was dropped without check()");
        }
    }
}
