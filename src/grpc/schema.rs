//! The schema of a gRPC service from its .proto files: compiled with protox (imports searched
//! in the import paths, the first proto's directory, and the well-known types bundled with it),
//! a method found by its `package.Service/Method` name, and its request message built from
//! JSON by prost-reflect (an unknown field or a wrong type is an error that names it). Every
//! refusal is one line. Files are read within a size bound. Must not open sockets or know runs.

use std::path::{Path, PathBuf};

use prost_reflect::prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};
use protox::file::{
    ChainFileResolver, File, FileResolver, GoogleFileResolver, IncludeFileResolver,
};

/// The largest .proto file read (a schema is text a person wrote).
pub const PROTO_LIMIT: u64 = 4 << 20;

/// The largest request message built from JSON, encoded.
pub const MESSAGE_LIMIT: usize = crate::proto::grpc::MAX_MESSAGE as usize;

/// The services and messages of a set of .proto files.
#[derive(Debug, Clone)]
pub struct Schema {
    pool: DescriptorPool,
}

/// One method of a service, found in a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    desc: MethodDescriptor,
}

/// An include path whose files are read only within `PROTO_LIMIT`.
struct Bounded {
    dir: PathBuf,
    inner: IncludeFileResolver,
}

impl FileResolver for Bounded {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        self.inner.resolve_path(path)
    }

    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let path = self.dir.join(name);
        if let Ok(meta) = std::fs::metadata(&path)
            && meta.len() > PROTO_LIMIT
        {
            return Err(protox::Error::new(std::io::Error::other(format!(
                "{}: {} bytes, more than the {PROTO_LIMIT} a .proto may have",
                path.display(),
                meta.len()
            ))));
        }
        self.inner.open_file(name)
    }
}

/// One line out of a compiler's message, whatever it spans.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Schema {
    /// Compiles `protos` with their imports, searched in `import_paths` and then in the first
    /// proto's directory (as protoc's `-I` would be given them).
    pub fn compile(protos: &[PathBuf], import_paths: &[PathBuf]) -> Result<Schema, String> {
        if protos.is_empty() {
            return Err("--proto: no file given".into());
        }
        let mut includes: Vec<PathBuf> = import_paths.to_vec();
        for p in protos {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                _ => PathBuf::from("."),
            };
            if !includes.contains(&dir) {
                includes.push(dir);
            }
        }
        let mut chain = ChainFileResolver::new();
        for dir in &includes {
            chain.add(Bounded {
                dir: dir.clone(),
                inner: IncludeFileResolver::new(dir.clone()),
            });
        }
        chain.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true).include_source_info(false);
        for p in protos {
            // The file itself, bounded as its imports are.
            match std::fs::metadata(p) {
                Err(e) => return Err(format!("--proto {}: {e}", p.display())),
                Ok(m) if m.len() > PROTO_LIMIT => {
                    return Err(format!(
                        "--proto {}: {} bytes, more than the {PROTO_LIMIT} a .proto may have",
                        p.display(),
                        m.len()
                    ));
                }
                Ok(_) => {}
            }
            compiler
                .open_file(p)
                .map_err(|e| format!("--proto {}: {}", p.display(), one_line(&e.to_string())))?;
        }
        Ok(Schema {
            pool: compiler.descriptor_pool(),
        })
    }

    /// A schema from a serialized `FileDescriptorSet` (what server reflection returns).
    /// `whose`: what the descriptors are, for the error (the server's, or a --protoset file).
    pub fn from_descriptor_set(bytes: &[u8], whose: &str) -> Result<Schema, String> {
        DescriptorPool::decode(bytes)
            .map(|pool| Schema { pool })
            .map_err(|e| format!("{whose}: {}", one_line(&e.to_string())))
    }

    /// The services, by full name, each with its methods' names.
    pub fn services(&self) -> Vec<(String, Vec<String>)> {
        self.pool
            .services()
            .map(|s| {
                let methods = s.methods().map(|m| m.name().to_owned()).collect();
                (s.full_name().to_owned(), methods)
            })
            .collect()
    }

    /// The method `call` names: `package.Service/Method` (or `package.Service.Method`, as
    /// grpcurl writes it).
    pub fn method(&self, call: &str) -> Result<Method, String> {
        let call = call.trim().trim_start_matches('/');
        let (service, method) = match call.rsplit_once('/') {
            Some(parts) => parts,
            None => call
                .rsplit_once('.')
                .ok_or_else(|| format!("--call {call:?}: give package.Service/Method"))?,
        };
        let Some(svc) = self.pool.get_service_by_name(service) else {
            let known: Vec<String> = self.services().into_iter().map(|s| s.0).collect();
            return Err(format!(
                "--call {call}: no service {service} in the schema (it has: {})",
                match known.is_empty() {
                    true => "none".into(),
                    false => known.join(", "),
                }
            ));
        };
        let found = svc.methods().find(|m| m.name() == method);
        found.map(|desc| Method { desc }).ok_or_else(|| {
            let known: Vec<String> = svc.methods().map(|m| m.name().to_owned()).collect();
            format!(
                "--call {call}: {service} has no method {method} (it has: {})",
                known.join(", ")
            )
        })
    }
}

impl Method {
    /// The request's `:path`: `/package.Service/Method`.
    pub fn path(&self) -> String {
        format!(
            "/{}/{}",
            self.desc.parent_service().full_name(),
            self.desc.name()
        )
    }

    /// `package.Service/Method`.
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            self.desc.parent_service().full_name(),
            self.desc.name()
        )
    }

    /// The full names of the request's and the response's message types.
    pub fn input_name(&self) -> String {
        self.desc.input().full_name().to_owned()
    }

    pub fn output_name(&self) -> String {
        self.desc.output().full_name().to_owned()
    }

    /// Whether the server answers with a stream of messages; whether the client sends one.
    pub fn server_streaming(&self) -> bool {
        self.desc.is_server_streaming()
    }

    pub fn client_streaming(&self) -> bool {
        self.desc.is_client_streaming()
    }

    /// The request message `json` describes, encoded (without gRPC's prefix). An unknown
    /// field, a wrong type or text that is not JSON is one line that says which.
    pub fn request(&self, json: &str) -> Result<Vec<u8>, String> {
        let input = self.desc.input();
        let mut de = serde_json::Deserializer::from_str(json);
        let mut track = serde_path_to_error::Track::new();
        let read = DynamicMessage::deserialize(
            input.clone(),
            serde_path_to_error::Deserializer::new(&mut de, &mut track),
        );
        let msg = read.and_then(|m| de.end().map(|()| m)).map_err(|e| {
            // The field it was reading, when it was in one.
            let at = track.path().to_string();
            let field = match at.as_str() {
                "." | "" => String::new(),
                path => format!(" (at {path})"),
            };
            format!(
                "-d: not a {} message{field}: {}",
                input.full_name(),
                one_line(&e.to_string())
            )
        })?;
        let bytes = msg.encode_to_vec();
        if bytes.len() > MESSAGE_LIMIT {
            return Err(format!(
                "-d: the {} message is {} bytes, more than the {MESSAGE_LIMIT} gRPC servers accept",
                input.full_name(),
                bytes.len()
            ));
        }
        Ok(bytes)
    }

    /// A response message, as JSON (for `-v`); `None` if the bytes are not one.
    pub fn response_json(&self, bytes: &[u8]) -> Option<String> {
        let msg = DynamicMessage::decode(self.desc.output(), bytes).ok()?;
        serde_json::to_string(&msg).ok()
    }

    /// A request message, as JSON (for `-v` and `--dry-run`).
    pub fn request_json(&self, bytes: &[u8]) -> Option<String> {
        let msg = DynamicMessage::decode(self.desc.input(), bytes).ok()?;
        serde_json::to_string(&msg).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTO: &str = r#"
syntax = "proto3";
package kv.v1;
import "google/protobuf/timestamp.proto";
import "common.proto";

service Store {
  rpc Get (GetRequest) returns (Item);
  rpc Watch (GetRequest) returns (stream Item);
}

message GetRequest {
  string key = 1;
  int32 version = 2;
  repeated string tags = 3;
  common.Page page = 4;
  google.protobuf.Timestamp at = 5;
}

message Item { string key = 1; bytes value = 2; }
"#;

    const COMMON: &str =
        "syntax = \"proto3\";\npackage common;\nmessage Page { uint32 size = 1; }\n";

    /// A directory of the test's own, removed with what is in it when the test is done.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("spate-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn schema(dir: &Dir) -> Schema {
        let protos = dir.path().join("protos");
        std::fs::create_dir_all(protos.join("inc")).unwrap();
        std::fs::write(protos.join("kv.proto"), PROTO).unwrap();
        std::fs::write(protos.join("inc/common.proto"), COMMON).unwrap();
        Schema::compile(&[protos.join("kv.proto")], &[protos.join("inc")]).unwrap()
    }

    #[test]
    fn a_method_is_found_and_its_request_built_from_json() {
        let dir = Dir::new("grpc-schema");
        let s = schema(&dir);
        assert_eq!(
            s.services(),
            [(
                "kv.v1.Store".to_owned(),
                vec!["Get".to_owned(), "Watch".to_owned()]
            )]
        );
        let get = s.method("kv.v1.Store/Get").unwrap();
        assert_eq!(get.path(), "/kv.v1.Store/Get");
        assert!(!get.server_streaming() && !get.client_streaming());
        assert!(s.method("kv.v1.Store.Watch").unwrap().server_streaming());
        // Field 1 "k", field 2 = 7, field 4 {size: 10}, field 5 {seconds: 1}.
        let bytes = get
            .request(r#"{"key":"k","version":7,"page":{"size":10},"at":"1970-01-01T00:00:01Z"}"#)
            .unwrap();
        assert_eq!(bytes, b"\x0a\x01k\x10\x07\x22\x02\x08\x0a\x2a\x02\x08\x01");
        assert_eq!(
            get.request("{}").unwrap(),
            b"",
            "every field at its default"
        );
        let item = b"\x0a\x01k\x12\x02hi";
        assert_eq!(
            get.response_json(item).as_deref(),
            Some(r#"{"key":"k","value":"aGk="}"#)
        );
    }

    #[test]
    fn what_the_schema_does_not_have_is_one_line_naming_it() {
        let dir = Dir::new("grpc-schema-bad");
        let s = schema(&dir);
        let get = s.method("kv.v1.Store/Get").unwrap();
        for (json, says) in [
            (r#"{"nope":1}"#, "nope"),
            (r#"{"version":"seven"}"#, "(at version)"),
            (r#"{"key":"k"} trailing"#, "trailing"),
            ("not json", "kv.v1.GetRequest"),
            (r#"{"page":{"size":-1}}"#, "(at page.size)"),
        ] {
            let e = get.request(json).unwrap_err();
            assert!(e.contains(says) && e.starts_with("-d: "), "{json}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        for (call, says) in [
            (
                "kv.v1.Nope/Get",
                "no service kv.v1.Nope in the schema (it has: kv.v1.Store)",
            ),
            (
                "kv.v1.Store/Put",
                "kv.v1.Store has no method Put (it has: Get, Watch)",
            ),
            ("Get", "give package.Service/Method"),
        ] {
            let e = s.method(call).unwrap_err();
            assert!(e.contains(says), "{call}: {e}");
        }
    }

    #[test]
    fn files_that_are_not_a_schema_are_refused_in_one_line() {
        let dir = Dir::new("grpc-schema-files");
        let bad = dir.path().join("bad.proto");
        std::fs::write(&bad, "syntax = \"proto3\";\nmessage {\n").unwrap();
        let e = Schema::compile(&[bad], &[]).unwrap_err();
        assert!(e.starts_with("--proto ") && e.lines().count() == 1, "{e}");
        let missing = dir.path().join("missing.proto");
        assert!(
            Schema::compile(&[missing], &[])
                .unwrap_err()
                .contains("missing.proto")
        );
        let imports = dir.path().join("imports.proto");
        std::fs::write(
            &imports,
            "syntax = \"proto3\";\nimport \"nowhere.proto\";\n",
        )
        .unwrap();
        let e = Schema::compile(&[imports], &[]).unwrap_err();
        assert!(e.contains("nowhere.proto") && e.lines().count() == 1, "{e}");
        let big = dir.path().join("big.proto");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(PROTO_LIMIT + 1).unwrap();
        assert!(
            Schema::compile(&[big], &[])
                .unwrap_err()
                .contains("more than")
        );
        // An import over the bound is refused as the file itself is.
        let huge = dir.path().join("huge.proto");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(PROTO_LIMIT + 1)
            .unwrap();
        let top = dir.path().join("top.proto");
        std::fs::write(&top, "syntax = \"proto3\";\nimport \"huge.proto\";\n").unwrap();
        assert!(
            Schema::compile(&[top], &[])
                .unwrap_err()
                .contains("more than")
        );
        assert!(Schema::compile(&[], &[]).unwrap_err().contains("no file"));
        assert!(Schema::from_descriptor_set(b"\xff\xff", "x").is_err());
    }
}
