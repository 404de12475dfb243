//! What crosses from one Lua state to another (`thread:set` and `thread:get`, and the setup
//! state's view of a thread's globals after the run): nil, booleans, numbers, strings and
//! tables of the same, as wrk's copy rules allow; anything else arrives as nil. Tables are
//! copied as a graph, each once however often it is referred to, so that a table that holds
//! itself (`G = _G`) or one shared by two others costs its size, not an exponential; and a copy
//! has a bound on its entries and bytes. Plain Rust data, so that it can go from the main
//! thread to a load thread and back. Must not hold Lua values.

use std::collections::HashMap;

use mlua::{Lua, Table, Value};

/// Most table entries one copy holds, all its tables together.
pub const MAX_ENTRIES: usize = 1 << 20;

/// Most bytes of strings one copy holds.
pub const MAX_TEXT: usize = 64 << 20;

/// A Lua value outside any state, with the tables it refers to.
#[derive(Debug, Clone, PartialEq)]
pub struct Copied {
    value: Node,
    /// Each table's entries, by its place here; `Node::Table` refers to them.
    tables: Vec<Vec<(Node, Node)>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Nil,
    Bool(bool),
    Integer(i64),
    Number(f64),
    Text(Vec<u8>),
    Table(usize),
}

/// A value over the bounds of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the value holds more than {MAX_ENTRIES} table entries or {} MiB of strings, the most that crosses between threads",
            MAX_TEXT >> 20
        )
    }
}

impl Copied {
    /// `v` as it can be copied.
    pub fn of(v: &Value) -> Result<Copied, TooLarge> {
        let mut copy = Copier::default();
        let value = copy.node(v)?;
        // Each table is filled once, from a work list: no recursion, whatever the nesting.
        while let Some((t, at)) = copy.todo.pop() {
            let mut entries = Vec::new();
            for pair in t.pairs::<Value, Value>() {
                let Ok((k, v)) = pair else {
                    continue;
                };
                let k = copy.node(&k)?;
                // A key that copies to nil (a function, a coroutine) is left out.
                if k == Node::Nil {
                    continue;
                }
                entries.push((k, copy.node(&v)?));
                copy.entries += 1;
                if copy.entries > MAX_ENTRIES {
                    return Err(TooLarge);
                }
            }
            copy.tables[at] = entries;
        }
        Ok(Copied {
            value,
            tables: copy.tables,
        })
    }

    pub fn is_nil(&self) -> bool {
        self.value == Node::Nil
    }

    /// The value in the state `lua`, its tables made anew with the same sharing.
    pub fn to_lua(&self, lua: &Lua) -> mlua::Result<Value> {
        let made: Vec<Table> = (0..self.tables.len())
            .map(|_| lua.create_table())
            .collect::<mlua::Result<_>>()?;
        let value = |n: &Node| -> mlua::Result<Value> {
            Ok(match n {
                Node::Nil => Value::Nil,
                Node::Bool(b) => Value::Boolean(*b),
                Node::Integer(i) => Value::Integer(*i),
                Node::Number(x) => Value::Number(*x),
                Node::Text(t) => Value::String(lua.create_string(t)?),
                Node::Table(i) => Value::Table(made[*i].clone()),
            })
        };
        for (t, entries) in made.iter().zip(&self.tables) {
            for (k, v) in entries {
                t.raw_set(value(k)?, value(v)?)?;
            }
        }
        value(&self.value)
    }
}

#[cfg(test)]
impl Copied {
    /// A number, for tests.
    pub fn number(x: f64) -> Copied {
        Copied {
            value: Node::Number(x),
            tables: Vec::new(),
        }
    }

    /// A string, for tests.
    pub fn text(b: &[u8]) -> Copied {
        Copied {
            value: Node::Text(b.to_vec()),
            tables: Vec::new(),
        }
    }
}

/// One copy under way: the tables met so far, by identity.
#[derive(Default)]
struct Copier {
    seen: HashMap<*const std::ffi::c_void, usize>,
    tables: Vec<Vec<(Node, Node)>>,
    todo: Vec<(Table, usize)>,
    entries: usize,
    text: usize,
}

impl Copier {
    fn node(&mut self, v: &Value) -> Result<Node, TooLarge> {
        Ok(match v {
            Value::Boolean(b) => Node::Bool(*b),
            Value::Integer(i) => Node::Integer(*i),
            Value::Number(x) => Node::Number(*x),
            Value::String(s) => {
                let bytes = s.as_bytes();
                self.text += bytes.len();
                if self.text > MAX_TEXT {
                    return Err(TooLarge);
                }
                Node::Text(bytes.to_vec())
            }
            Value::Table(t) => {
                let next = self.tables.len();
                let at = *self.seen.entry(t.to_pointer()).or_insert(next);
                if at == next {
                    self.tables.push(Vec::new());
                    self.todo.push((t.clone(), at));
                }
                Node::Table(at)
            }
            _ => Node::Nil,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(text: &str, check: &str) -> String {
        let a = Lua::new();
        let v: Value = a.load(text).eval().unwrap();
        let copied = Copied::of(&v).unwrap();
        let b = Lua::new();
        b.globals().set("v", copied.to_lua(&b).unwrap()).unwrap();
        b.load(check).eval().unwrap()
    }

    #[test]
    fn data_survives_a_trip_to_another_state_and_functions_do_not() {
        let got = through(
            "return { n = 1, x = 2.5, s = 'hi', b = true, t = { 'a', 'b' }, f = print }",
            "return v.n .. ' ' .. v.x .. ' ' .. v.s .. ' ' .. tostring(v.b) .. ' ' .. v.t[2] .. ' ' .. tostring(v.f)",
        );
        assert_eq!(got, "1 2.5 hi true b nil");
    }

    #[test]
    fn tables_that_hold_themselves_or_each_other_keep_their_shape() {
        let got = through(
            "local t = { name = 't' } t.me = t t.again = t \
             local s = { t = t } t.s = s return t",
            "return tostring(v.me == v) .. tostring(v.again == v) .. tostring(v.s.t == v) .. v.me.me.s.t.name",
        );
        assert_eq!(got, "truetruetruet");
    }

    #[test]
    fn the_globals_table_copies_in_its_own_size() {
        // G = _G twice over: without identity, 2^32 copies of the globals.
        let lua = Lua::new();
        let v: Value = lua
            .load("G = _G H = _G t = {} t.a = t t.b = t t.c = { t, t } return _G")
            .eval()
            .unwrap();
        let c = Copied::of(&v).unwrap();
        assert!(c.tables.len() < 64, "{} tables", c.tables.len());
    }

    #[test]
    fn a_copy_over_its_bounds_is_refused() {
        let lua = Lua::new();
        let wide: Value = lua
            .load(format!(
                "local t = {{}} for i = 1, {} do t[i] = i end return t",
                MAX_ENTRIES + 1
            ))
            .eval()
            .unwrap();
        assert_eq!(Copied::of(&wide), Err(TooLarge));
        let long: Value = lua
            .load(format!(
                "local s = string.rep('x', {}) return {{ s, s .. 'y' }}",
                MAX_TEXT / 2 + 1
            ))
            .eval()
            .unwrap();
        assert_eq!(Copied::of(&long), Err(TooLarge));
        // A long chain is no recursion: it copies whole.
        let deep: Value = lua
            .load("local t = {} for i = 1, 100000 do t = { next = t } end return t")
            .eval()
            .unwrap();
        assert_eq!(Copied::of(&deep).unwrap().tables.len(), 100_001);
    }
}
