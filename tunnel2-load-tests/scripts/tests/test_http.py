"""HTTP/1.1 heads and bodies as the load-test engines read and write them."""

import pytest

from loadkit.http import BodyDecoder, parse_head, parse_url, request_head, response_head, status_of


def test_a_response_head_gives_its_status_and_lower_case_headers():
    start, headers = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-Thing:  a: b \r\nCONNECTION: close")
    assert start == ["HTTP/1.1", "200", "OK"]
    assert status_of(start) == 200
    assert headers == {"content-length": "4", "x-thing": "a: b", "connection": "close"}


def test_a_reason_phrase_keeps_its_spaces_and_a_line_without_a_colon_is_skipped():
    start, headers = parse_head(b"HTTP/1.1 404 Not Found\r\nno colon here\r\nA: 1")
    assert start == ["HTTP/1.1", "404", "Not Found"]
    assert headers == {"a": "1"}


def test_a_repeated_header_keeps_the_last_value():
    _, headers = parse_head(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2")
    assert headers["x-a"] == "2"


def test_a_head_without_a_status_code_has_status_minus_one():
    assert status_of(parse_head(b"HTTP/1.1")[0]) == -1
    assert status_of(parse_head(b"HTTP/1.1 abc OK")[0]) == -1


def test_a_request_start_line_splits_into_method_target_and_version():
    start, headers = parse_head(b"POST /upload?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 10")
    assert start == ["POST", "/upload?x=1", "HTTP/1.1"]
    assert headers["content-length"] == "10"


def test_request_and_response_heads_are_written_byte_for_byte():
    assert request_head("GET", 8080, "/p", "ua", [("Accept", "*/*")]) == \
        b"GET /p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ua\r\nAccept: */*\r\n\r\n"
    assert response_head("200 OK", 4, close=True) == \
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"
    assert response_head("404 Not Found", 0, close=False) == \
        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n"


def test_only_loopback_http_urls_are_taken():
    assert parse_url("http://127.0.0.1:12007/loadtest/ping?x=1") == (12007, "/loadtest/ping?x=1")
    assert parse_url("http://127.0.0.1") == (80, "/")
    for url in ("https://127.0.0.1:1/", "http://localhost:1/", "http://10.0.0.1:1/"):
        with pytest.raises(SystemExit):
            parse_url(url)


def decoder(length=None, chunked=False):
    counted = []
    return BodyDecoder(length, chunked, counted.append), counted


def test_a_content_length_body_ends_at_its_length_and_keeps_what_follows():
    d, counted = decoder(length=5)
    assert not d.feed(b"abc")
    assert d.feed(b"deGET / HTTP/1.1")
    assert sum(counted) == 5
    assert d.leftover == b"GET / HTTP/1.1"


def test_a_chunked_body_split_anywhere_is_followed_to_its_end():
    body = b"4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nTrailer: x\r\n\r\nNEXT"
    end = body.index(b"NEXT")
    for cut in range(1, len(body)):
        d, counted = decoder(chunked=True)
        assert d.feed(body[:cut]) == (cut >= end), cut
        if cut < end:   # a complete body is fed no more: the caller takes what follows from leftover
            assert d.feed(body[cut:]), cut
        assert sum(counted) == 7, cut
        assert d.leftover == (b"NEXT" if cut < end else body[end:cut]), cut


def test_an_unfinished_chunked_body_is_not_complete():
    d, counted = decoder(chunked=True)
    assert not d.feed(b"a\r\n01234")
    assert sum(counted) == 5
    assert not d.complete()


def test_bad_chunk_sizes_are_refused():
    d, _ = decoder(chunked=True)
    with pytest.raises(ValueError):
        d.feed(b"zz\r\n")
    d, _ = decoder(chunked=True)
    with pytest.raises(ValueError):
        d.feed(b"1" * 5000)
