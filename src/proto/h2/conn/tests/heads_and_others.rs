//! What a connection hands a receiver that reads heads (as HTTP/1.1 lines, however the bytes
//! are split), and streams that send another request than the connection's own (`Other`: its
//! block, its body, and the table size update a small server table needs).

use bytes::Bytes;

use super::*;
use crate::proto::h2::Other;

/// A receiver that reads each final head's fields (`Events::HEADS`) and its body.
#[derive(Default)]
struct Heads {
    heads: Vec<String>,
    body: Vec<u8>,
}

impl Events for Heads {
    const HEADS: bool = true;
    fn head_bytes(&mut self, head: &[u8]) {
        self.heads.push(String::from_utf8_lossy(head).into_owned());
    }
    fn data(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
    }
}

#[test]
fn a_receiver_that_asks_hears_each_head_as_http1_lines_however_the_bytes_are_split() {
    let bytes = two_responses();
    for cut in 0..=bytes.len() {
        for cuts in [vec![cut], (0..bytes.len()).collect()] {
            let mut c = settled_with::<Heads>(2, &[], b"");
            open(&mut c, 0);
            open(&mut c, 1);
            feed(&mut c, &bytes, &cuts);
            assert!(outcome(&mut c, 0).expect("stream 1 done").is_ok());
            assert!(outcome(&mut c, 1).expect("stream 3 done").is_ok());
            assert_eq!(
                c.events(0).heads,
                ["HTTP/2 200\r\nx-a: v\r\n\r\n"],
                "cut {cut}"
            );
            assert_eq!(
                c.events(1).heads,
                ["HTTP/2 404\r\nx-a: v\r\ndate: Mon, 21 Oct 2013 20:13:21 GMT\r\n\r\n"],
                "the dynamic table's and Huffman's fields too; cut {cut}"
            );
            assert_eq!(c.events(0).body, b"hello world");
        }
    }
}

fn other() -> Other {
    Other::new(&Prepared::new(
        &[
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":path", b"/other"),
            (b":authority", b"127.0.0.1:1"),
            (b"x-entry", b"2"),
        ],
        Bytes::from_static(b"other body"),
    ))
}

/// The fields of each HEADERS frame in `sent`, decoded in order as the server does.
fn decoded(sent: &[(u8, u8, u32, Vec<u8>)]) -> Vec<Vec<(String, String)>> {
    let mut server = Decoder::default();
    sent.iter()
        .filter(|f| f.0 == HEADERS)
        .map(|f| {
            let mut got = Vec::new();
            server
                .decode(&f.3, |n, v| {
                    got.push((
                        String::from_utf8_lossy(n).into_owned(),
                        String::from_utf8_lossy(v).into_owned(),
                    ));
                })
                .unwrap();
            got
        })
        .collect()
}

#[test]
fn a_stream_sends_another_request_with_its_body_beside_the_connections_own() {
    let mut c = settled(3, &[], b"");
    open(&mut c, 0);
    let o = other();
    assert!(c.poll_open(1, &mut cx(), Some(&o)).is_ready());
    open(&mut c, 2);
    let sent = frames(&c.out);
    let heads = decoded(&sent);
    assert_eq!(heads.len(), 3);
    assert!(heads[0].contains(&(":path".into(), "/".into())));
    assert!(heads[1].contains(&(":path".into(), "/other".into())));
    assert!(heads[1].contains(&("x-entry".into(), "2".into())));
    assert!(
        heads[2].contains(&(":path".into(), "/".into())),
        "the own request's index holds"
    );
    let data: Vec<_> = sent.iter().filter(|f| f.0 == DATA).collect();
    assert_eq!(data.len(), 1);
    assert_eq!((data[0].1, data[0].2), (END_STREAM, 3));
    assert_eq!(data[0].3, b"other body");
    let other_head = sent.iter().find(|f| f.0 == HEADERS && f.2 == 3).unwrap();
    assert_eq!(other_head.1, END_HEADERS, "the body follows");
    // Its response ends the stream as any other, and the slot sends the own request next.
    feed(&mut c, &ok(3), &[]);
    assert!(outcome(&mut c, 1).unwrap().is_ok());
    c.out.clear();
    open(&mut c, 1);
    let sent = frames(&c.out);
    assert_eq!(sent.len(), 1, "no body: {sent:?}");
    assert_eq!(sent[0].1, END_HEADERS | END_STREAM);
}

#[test]
fn another_request_first_on_a_small_table_says_the_size_and_later_ones_do_not_need_to() {
    let mut c = settled(3, &[(SETTINGS_HEADER_TABLE_SIZE, 100)], b"");
    let o = other();
    assert!(c.poll_open(0, &mut cx(), Some(&o)).is_ready());
    open(&mut c, 1);
    assert!(c.poll_open(2, &mut cx(), Some(&o)).is_ready());
    let sent = frames(&c.out);
    let heads: Vec<_> = sent.iter().filter(|f| f.0 == HEADERS).collect();
    assert_eq!(heads[0].3[0] & 0xe0, 0x20, "a size update first");
    assert_eq!(
        heads[1].3[0] & 0xe0,
        0x20,
        "the own first block says it too"
    );
    assert_ne!(heads[2].3[0] & 0xe0, 0x20, "said once the own block went");
    let got = decoded(&sent);
    assert!(got[0].contains(&(":path".into(), "/other".into())));
    assert!(got[2].contains(&(":path".into(), "/other".into())));
    // A server with the default table hears no update at all.
    let mut c = settled(1, &[], b"");
    assert!(c.poll_open(0, &mut cx(), Some(&o)).is_ready());
    assert_ne!(frames(&c.out)[0].3[0] & 0xe0, 0x20);
}
