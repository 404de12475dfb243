//! What crosses from one Lua state to another (`thread:set` and `thread:get`, and the setup
//! state's view of a thread's globals after the run): nil, booleans, numbers, strings and
//! tables of the same, as wrk's copy rules allow; anything else arrives as nil. Plain Rust data,
//! so that it can go from the main thread to a load thread and back. Must not hold Lua values.

use mlua::{Lua, Table, Value};

/// Tables nested deeper than this arrive cut off (as nil): a table that contains itself must
/// not copy forever.
const MAX_DEPTH: usize = 32;

/// A Lua value outside any state.
#[derive(Debug, Clone, PartialEq)]
pub enum Copied {
    Nil,
    Bool(bool),
    Integer(i64),
    Number(f64),
    Text(Vec<u8>),
    Table(Vec<(Copied, Copied)>),
}

impl Copied {
    /// `v` as it can be copied.
    pub fn of(v: &Value) -> Copied {
        copy(v, 0)
    }

    /// The value in the state `lua`.
    pub fn to_lua(&self, lua: &Lua) -> mlua::Result<Value> {
        Ok(match self {
            Copied::Nil => Value::Nil,
            Copied::Bool(b) => Value::Boolean(*b),
            Copied::Integer(i) => Value::Integer(*i),
            Copied::Number(x) => Value::Number(*x),
            Copied::Text(t) => Value::String(lua.create_string(t)?),
            Copied::Table(pairs) => {
                let t = lua.create_table()?;
                for (k, v) in pairs {
                    // A key that copied to nil (a function, a cut-off table) is left out.
                    if *k != Copied::Nil {
                        t.raw_set(k.to_lua(lua)?, v.to_lua(lua)?)?;
                    }
                }
                Value::Table(t)
            }
        })
    }
}

fn copy(v: &Value, depth: usize) -> Copied {
    match v {
        Value::Boolean(b) => Copied::Bool(*b),
        Value::Integer(i) => Copied::Integer(*i),
        Value::Number(x) => Copied::Number(*x),
        Value::String(s) => Copied::Text(s.as_bytes().to_vec()),
        Value::Table(t) if depth < MAX_DEPTH => Copied::Table(pairs(t, depth)),
        _ => Copied::Nil,
    }
}

fn pairs(t: &Table, depth: usize) -> Vec<(Copied, Copied)> {
    t.pairs::<Value, Value>()
        .filter_map(Result::ok)
        .map(|(k, v)| (copy(&k, depth + 1), copy(&v, depth + 1)))
        .filter(|(k, _)| *k != Copied::Nil)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_survives_a_trip_to_another_state_and_functions_do_not() {
        let a = Lua::new();
        let v: Value = a
            .load("return { n = 1, x = 2.5, s = 'hi', b = true, t = { 'a', 'b' }, f = print }")
            .eval()
            .unwrap();
        let copied = Copied::of(&v);
        let b = Lua::new();
        b.globals().set("v", copied.to_lua(&b).unwrap()).unwrap();
        let got: String = b
            .load("return v.n .. ' ' .. v.x .. ' ' .. v.s .. ' ' .. tostring(v.b) .. ' ' .. v.t[2] .. ' ' .. tostring(v.f)")
            .eval()
            .unwrap();
        assert_eq!(got, "1 2.5 hi true b nil");
    }

    #[test]
    fn a_table_that_contains_itself_is_cut_off() {
        let lua = Lua::new();
        let v: Value = lua.load("local t = {} t.me = t return t").eval().unwrap();
        let mut c = Copied::of(&v);
        let mut depth = 0;
        while let Copied::Table(pairs) = c {
            depth += 1;
            c = pairs.into_iter().next().map_or(Copied::Nil, |(_, v)| v);
        }
        assert_eq!(depth, MAX_DEPTH);
    }
}
