//! Rust fixture: structs, enums, traits, impl blocks, generics, macros, nested modules.

pub const MAX_ITEMS: usize = 10;
static GREETING: &str = "hi";

pub struct Parser<T> {
    items: Vec<T>,
}

pub enum Token {
    Word(String),
    Number(i64),
}

pub trait Visitor {
    fn visit(&mut self, token: &Token);
}

impl<T: Clone> Parser<T> {
    pub fn new() -> Self {
        Parser { items: Vec::new() }
    }

    pub fn parse(&self, input: &str) -> Vec<Token> {
        let _ = input;
        helper();
        Vec::new()
    }
}

impl Visitor for Token {
    fn visit(&mut self, token: &Token) {
        let _ = token;
    }
}

fn helper() {}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

mod outer {
    pub mod inner {
        pub fn deep() -> u32 {
            super::super::helper();
            1
        }
    }
}

type Alias = Parser<u8>;
