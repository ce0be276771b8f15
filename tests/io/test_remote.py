"""Remote zarr stores (http://, s3://) read window by window, against a loopback HTTP server.

The server is ``http.server`` serving a temporary folder of zarr v2 and v3 stores written by
zarr-python on 127.0.0.1 (a free port), started by the fixture and stopped after the module. Its
handler counts requests and can be told to fail or stall chunk requests.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest

pytest.importorskip("aiohttp", reason="the 'remote' extra is not installed: pip install '.[remote]'")

from tests.cli_checks import one_line_error  # noqa: E402
from tests.ink.helpers import segment, write_levels  # noqa: E402

CHUNKS = (16, 16)
METADATA = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


def _is_chunk(path: str) -> bool:
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return not path.endswith("/") and last not in METADATA and ".zarr/" in path and not last.endswith(".html")


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder; ``/slow/...`` stalls; ``/spa/...`` answers every path with an HTML page;
    ``server.state.chunks`` = ``"500"``, ``"stall"`` or ``"trickle"`` (a byte every 0.8 s) fails
    chunk requests."""

    def log_message(self, *args):  # quiet
        pass

    def _stall(self):
        self.server.state.release.wait(10)
        try:
            self.send_error(404)
        except OSError:  # the client gave up long ago
            pass

    def _trickle(self):
        """A 200 answer whose body comes one byte every 0.8 s (each socket read is quick)."""
        body = b"x" * 64
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                if self.server.state.release.wait(0.8):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        except OSError:  # the client gave up
            pass

    def _huge(self, declared: bool):
        """A 200 answer of up to 10 GiB of zeros in 1 MiB blocks until the client hangs up: with its
        length declared (``Content-Length``), or chunked with no length; ``state.sent`` counts the
        bytes written."""
        block = b"\0" * (1 << 20)
        try:
            if declared:
                self.send_response(200)
                self.send_header("Content-Length", str(10 << 30))
            else:
                self.protocol_version = "HTTP/1.1"  # chunked transfer is HTTP/1.1's
                self.close_connection = True
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(10 << 10):
                if self.server.state.release.is_set():
                    return
                self.wfile.write(block if declared else b"%x\r\n%s\r\n" % (len(block), block))
                self.server.state.sent += len(block)
            if not declared:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client hung up: what this answer is for
            pass

    def do_GET(self):
        state = self.server.state
        state.requests.append(self.path)
        if self.path.startswith("/slow/"):
            return self._stall()
        if self.path.startswith("/spa/"):
            body = b"<!DOCTYPE html><html><body>an app, not a store</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if state.chunks and _is_chunk(self.path):
            if state.chunks == "stall":
                return self._stall()
            if state.chunks == "trickle":
                return self._trickle()
            if state.chunks in ("huge-declared", "huge-chunked"):
                return self._huge(state.chunks == "huge-declared")
            self.send_error(500)
            return None
        return super().do_GET()


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # zarr fetches a window's chunks at once; the default 5 drops SYNs (1 s retries)

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return  # a client that hung up mid-answer: the bounded reads do, on purpose
        super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(root folder, base URL, server state, arrays)``; the server stops after the module."""
    root = tmp_path_factory.mktemp("served")
    pred, ink, mask = segment((70, 90), seed=5)
    np.save(root / "MAP.npy", pred)
    for fmt in (2, 3):
        write_levels(root / f"v{fmt}" / "inklabels.zarr", {"2": ink.astype(np.uint8)}, zarr_format=fmt, chunks=CHUNKS)
        write_levels(root / f"v{fmt}" / "supervision.zarr", {"2": mask.astype(np.uint8)}, zarr_format=fmt,
                     chunks=CHUNKS)
    write_levels(root / "map.zarr", {"0": pred}, zarr_format=3, chunks=CHUNKS)
    from tests.objects.helpers import synthetic_pair

    truth, guess = synthetic_pair((64, 80), n=12, seed=3, r=(3, 7))
    write_levels(root / "truth.zarr", {"0": truth}, zarr_format=3, chunks=CHUNKS)
    write_levels(root / "pred.zarr", {"0": guess}, zarr_format=2, chunks=CHUNKS)
    write_levels(root / "one.zarr", {"0": truth[:16, :16]}, zarr_format=3, chunks=CHUNKS)  # one chunk
    np.save(root / "one.npy", guess[:16, :16])
    write_levels(root / "holes.zarr", {"2": np.full((40, 40), 7, np.uint8)}, zarr_format=3, chunks=CHUNKS)
    os.remove(root / "holes.zarr" / "2" / "c" / "0" / "1")  # a chunk the server does not have
    (root / "page.html").write_text("<html><body>a page about a store</body></html>")
    from tests.io.test_zarr_store import BIG_BOMBS, _bomb_store

    for name, (fmt, compressor, payload) in BIG_BOMBS.items():
        _bomb_store(root / "bombs" / f"{name}.zarr", fmt, compressor, payload())
    from segscore.ink.demo import make_sample

    for name in ("demo", "demo_holed"):
        make_sample(root / name)
    os.remove(root / "demo_holed" / "labels" / "inklabels.zarr" / "2" / "c" / "1" / "1")  # one labels chunk
    server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    server.state = types.SimpleNamespace(requests=[], chunks=None, release=threading.Event(), sent=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", server.state, (pred, ink, mask)
    finally:
        server.state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def env(monkeypatch, served):
    """No proxy between the client and the loopback server; a short default timeout; a clean state."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "5")
    state = served[2]
    state.requests.clear()
    state.chunks = None
    yield
    state.chunks = None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    result = json.loads(out)
    files = result.pop("files", None)
    return result, files


# ---------------------------------------------------------------------------------------------
# identical results


@pytest.mark.parametrize("fmt", [2, 3])
def test_auc_over_http_equals_the_local_copy(cli, served, fmt):
    root, url, state, _ = served
    local = ["--labels", root / f"v{fmt}/inklabels.zarr", "--mask", root / f"v{fmt}/supervision.zarr"]
    remote = ["--labels", f"{url}/v{fmt}/inklabels.zarr", "--mask", f"{url}/v{fmt}/supervision.zarr"]
    want, _ = _json(cli, "auc", root / "MAP.npy", *local, "--bootstrap", "20", "--block-px", "9")
    got, files = _json(cli, "auc", root / "MAP.npy", *remote, "--bootstrap", "20", "--block-px", "9",
                       "--tile-rows", "7")
    assert got == want and want["forward"]["auc"] is not None
    assert files["labels"] == f"{url}/v{fmt}/inklabels.zarr"
    assert any(_is_chunk(p) for p in state.requests)


def test_a_map_given_as_a_url(cli, served):
    root, url, _, _ = served
    labels = ["--labels", root / "v3/inklabels.zarr", "--mask", root / "v3/supervision.zarr"]
    want, _ = _json(cli, "auc", root / "map.zarr/0", *labels)
    got, files = _json(cli, "auc", f"{url}/map.zarr/0", *labels)
    assert got == want and files["prediction"] == f"{url}/map.zarr/0"


def test_objects_over_http_equals_the_local_copy(cli, served):
    root, url, _, _ = served
    want, _ = _json(cli, "objects", root / "truth.zarr/0", root / "pred.zarr/0", "--tile-rows", "9")
    got, _ = _json(cli, "objects", f"{url}/truth.zarr/0", f"{url}/pred.zarr/0", "--tile-rows", "9")
    # zarr-python writes no chunk equal to the fill value: both runs count the same absent chunks
    assert want["warnings"] == [f"{root}/truth.zarr/0: 7 of 20 chunks absent, read as the fill value 0",
                                f"{root}/pred.zarr/0: 4 of 20 chunks absent, read as the fill value 0"]
    assert got["warnings"] == [w.replace(str(root), url) for w in want.pop("warnings")]
    got.pop("warnings")
    assert got == want


@pytest.mark.parametrize("fmt, keys", [(3, {"2/c/1/0", "2/c/1/1"}), (2, {"2/1.0", "2/1.1"})])
def test_a_window_fetches_only_its_chunks(served, fmt, keys):
    from segscore.io.readers import open_zarr

    root, url, state, (_, ink, _) = served
    store = f"{url}/v{fmt}/inklabels.zarr"
    source = open_zarr(store, level="2")
    assert source.shape == ink.shape and source.chunks == CHUNKS and source.name == store
    state.requests.clear()
    window = source.read((slice(20, 30), slice(3, 20)))  # chunk row 1, chunk columns 0 and 1
    assert np.array_equal(window, ink[20:30, 3:20])
    prefix = f"/v{fmt}/inklabels.zarr/"
    chunks = [p[len(prefix):] for p in state.requests if _is_chunk(p)]
    assert sorted(chunks) == sorted(keys), state.requests  # each needed chunk once, no other
    assert all(not _is_chunk(p) or p.startswith(prefix) for p in state.requests)


def test_a_missing_chunk_reads_as_the_fill_value(served):
    from segscore.io.readers import open_zarr

    root, url, _, _ = served
    with open_zarr(root / "holes.zarr", level="2") as local, open_zarr(f"{url}/holes.zarr", level="2") as remote:
        want, got = local.read_all(), remote.read_all()
    assert np.array_equal(got, want)
    assert (got[:16, 16:32] == 0).all() and (got[16:, :] == 7).all()


def test_absent_chunks_are_counted_over_http(served):
    from segscore.io.readers import open_zarr

    root, url, _, _ = served
    with open_zarr(root / "holes.zarr", level="2") as local, open_zarr(f"{url}/holes.zarr", level="2") as remote:
        local.read_all()
        remote.read((slice(0, 40), slice(0, 20)))
        remote.read((slice(0, 40), slice(10, 40)))  # chunks read twice are counted once
        assert local.absent_chunks() == remote.absent_chunks() == (1, 9)
        assert remote.warnings() == [f"{url}/holes.zarr/2: 1 of 9 chunks absent, read as the fill value 0"]


def test_the_issues_example_a_deleted_labels_chunk_of_the_demo(cli, served):
    """Deleting one labels chunk of the demo's store changes the AUC: a warning says so, on stderr
    and in the JSON; the intact store reads with no warning, over HTTP as from the disk."""
    root, url, _, _ = served

    def run(where, name, *extra):
        seg = f"{where}/{name}"
        return cli("auc", root / name / "MAP.tif", "--labels", f"{seg}/labels/inklabels.zarr", "--mask",
                   f"{seg}/labels/supervision.zarr", "--control", root / name / "MAP_reverse.tif", *extra)

    code, out, err = run(url, "demo", "--json")
    intact = json.loads(out)
    assert code == 0 and err == "" and intact["warnings"] == []
    code, out, err = run(root, "demo", "--json")
    local = json.loads(out)
    assert local.pop("files") != intact.pop("files") and local == intact
    code, out, err = run(url, "demo_holed", "--json")
    holed = json.loads(out)
    line = f"{url}/demo_holed/labels/inklabels.zarr/2: 1 of 12 chunks absent, read as the fill value 0"
    assert code == 0 and holed["warnings"] == [line] and err == f"segscore auc: warning: {line}\n"
    assert (intact["forward"]["ink_px"], holed["forward"]["ink_px"]) == (11775, 8251)  # the issue's counts
    assert holed["forward"]["auc"] != intact["forward"]["auc"]
    code, out, err = run(url, "demo_holed")  # the text output too
    assert code == 0 and line in err and "AUC" in out


@pytest.mark.parametrize("bomb", ["zstd-5GiB-declared", "zstd-5GiB-blocks", "gzip-5GiB-members"])
def test_a_decompression_bomb_over_http(cli, served, bomb):
    """A 160 KB zstd (5 MB gzip) chunk declared 256 x 256 uint8 that decompresses to 5 GiB: longer
    than any encoding of a 64 KB chunk, it is refused by its Content-Length before its body is read
    (as a local file is by its size), in one line naming the chunk."""
    url = served[1]
    start = time.monotonic()
    code, out, err = cli("objects", f"{url}/bombs/{bomb}.zarr", f"{url}/bombs/{bomb}.zarr")
    assert time.monotonic() - start < 30
    one_line_error(code, out, err, f"{url}/bombs/{bomb}.zarr: cannot fetch chunk c/0/0: the server declares ")
    assert "bytes (Content-Length), more than any encoding of it takes (132,096)" in err


def test_a_server_that_trickles_times_out(served, monkeypatch):
    """One byte every 0.8 s passes every per-read wait; the request's total deadline (twice the
    timeout) ends it."""
    from segscore.errors import ScoreError
    from segscore.io.readers import open_zarr

    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "2")
    _, url, state, _ = served
    source = open_zarr(f"{url}/v3/inklabels.zarr", level="2")
    state.chunks = "trickle"
    start = time.monotonic()
    with pytest.raises(ScoreError) as caught:
        source.read((slice(0, 10), slice(0, 10)))
    elapsed = time.monotonic() - start
    assert 3.5 < elapsed < 8, elapsed
    message = str(caught.value)
    assert message.startswith(f"{url}/v3/inklabels.zarr: cannot fetch chunk 2/c/0/0: the answer did not arrive "
                              f"within 4 s") and "SEGSCORE_HTTP_TIMEOUT" in message and "\n" not in message


@pytest.mark.parametrize("how", ["huge-declared", "huge-chunked"])
def test_a_chunk_answer_longer_than_its_chunk_is_refused_reading_little(served, how):
    """A server answering a 16 x 16 int32 chunk with 10 GiB (its Content-Length declared, or chunked
    with no length): refused before the body is read, or one byte past the most any encoding of the
    chunk takes; in one line naming the URL and the chunk, long before the request's deadline, the
    process staying small. (One remote chunk: the peak is this fetch's; many chunks failing at once
    are the next test's.)"""
    from tests.hostile import bombs

    root, url, state, _ = served
    array = f"{url}/one.zarr/0"
    baseline = bombs.run_measured(["objects", array, root / "one.npy", "--json"], timeout=60)  # the server well
    assert baseline["code"] == 0, baseline["err"]
    state.chunks, state.sent = how, 0
    start = time.monotonic()
    r = bombs.run_measured(["objects", array, root / "one.npy"], timeout=60)
    elapsed = time.monotonic() - start
    line = bombs.refused_in_one_line(r, array, "cannot fetch chunk c/0/0")
    said = "the server declares 10,737,418,240 bytes (Content-Length)" if how == "huge-declared" \
        else "the server sent more than 66,576 bytes"  # 16 x 16 x 4 bytes, zstd's worst case beyond
    assert said in line and "any encoding of it takes" in line, line
    assert elapsed < 8, elapsed  # the deadline (2 x SEGSCORE_HTTP_TIMEOUT=5) did not end it
    assert r["peak"] < 300e6 and r["peak"] < baseline["peak"] + 64e6, (r["peak"], baseline["peak"])
    assert state.sent < 64 << 20, state.sent  # the client hung up, it did not read on
    print(f"{how}: {elapsed:.2f} s, peak {r['peak'] / 1e6:.0f} MB (well: {baseline['peak'] / 1e6:.0f} MB), "
          f"server wrote {state.sent / 1e6:.0f} MB")


@pytest.mark.parametrize("how", ["500", "huge-chunked"])
def test_a_failing_chunk_among_many_is_one_line_in_a_fresh_process(served, how):
    """20 chunks fetched at once, each failing: the command exits 2 with one line; the fetches still
    in flight end before it exits, so asyncio prints nothing after it (before: 4 or 5 runs in 6
    printed tasks "destroyed but pending" and exceptions "never retrieved")."""
    from tests.hostile import bombs

    _, url, state, _ = served
    state.chunks = how
    for _ in range(3):
        r = bombs.run_measured(["objects", f"{url}/truth.zarr/0", f"{url}/pred.zarr/0"], timeout=60)
        bombs.refused_in_one_line(r, "cannot fetch chunk ")


def test_a_bounded_read_still_reads_what_fits(served):
    """Chunks and metadata within their bounds read as before, whole or by byte range (a server
    that ignores Range, as this one does, answers 200 with the whole object: the range is cut from it)."""
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
    from zarr.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    from segscore.io.readers import open_zarr
    from segscore.io.remote import RemoteFetchError

    root, url, _, _ = served
    whole = (root / "truth.zarr" / "0" / "zarr.json").read_bytes()
    store = open_zarr(f"{url}/truth.zarr/0").store.inner  # the remote store under the capped one

    def run(key, byte_range, limit):
        value = sync(store.get_bounded(key, default_buffer_prototype(), byte_range, limit=limit))
        return None if value is None else value.to_bytes()

    assert run("zarr.json", None, len(whole)) == whole
    assert run("zarr.json", RangeByteRequest(3, 10), len(whole)) == whole[3:10]
    assert run("zarr.json", OffsetByteRequest(5), len(whole)) == whole[5:]
    assert run("zarr.json", SuffixByteRequest(4), len(whole)) == whole[-4:]
    assert run("c/9/9", None, 100) is None  # absent: the fill value
    with pytest.raises(RemoteFetchError, match=f"declares {len(whole):,} bytes .*takes \\({len(whole) - 1:,}\\)"):
        run("zarr.json", None, len(whole) - 1)


def test_a_remote_source_pickles(served):
    """Sources go to dask workers by pickle; a remote one reopens its store there."""
    import pickle

    from segscore.io.readers import open_zarr

    _, url, _, (_, ink, _) = served
    source = pickle.loads(pickle.dumps(open_zarr(f"{url}/v3/inklabels.zarr", level="2")))
    assert np.array_equal(source.read((slice(30, 50), slice(0, 90))), ink[30:50])


# ---------------------------------------------------------------------------------------------
# refusals: one line on stderr, exit 2


def _auc(served, labels, *extra):
    root, url, _, _ = served
    return ["auc", root / "MAP.npy", "--labels", labels, "--mask", f"{url}/v3/supervision.zarr", *extra]


def test_a_store_that_is_not_there(cli, served):
    url = served[1]
    one_line_error(*cli(*_auc(served, f"{url}/v3/nothing.zarr")), f"{url}/v3/nothing.zarr: no zarr store there")
    # a page with no zarr metadata under it (the server lists the folder): there, but not a store
    one_line_error(*cli(*_auc(served, f"{url}/v3")), f"{url}/v3: not a zarr store (there is a page or file there")


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_level_that_is_not_there(cli, served, fmt):
    url = served[1]
    code, out, err = cli(*_auc(served, f"{url}/v{fmt}/inklabels.zarr", "--level", "9"))
    one_line_error(code, out, err, f"{url}/v{fmt}/inklabels.zarr: no level '9'")
    assert "levels: ['2']" in err


def test_a_page_that_is_not_a_store(cli, served):
    url = served[1]
    code, out, err = cli(*_auc(served, f"{url}/page.html"))
    one_line_error(code, out, err, f"{url}/page.html: not a zarr store")
    code, out, err = cli(*_auc(served, f"{url}/spa/inklabels.zarr"))  # HTML for every path
    one_line_error(code, out, err, f"{url}/spa/inklabels.zarr: not a zarr store")
    assert "HTML page" in err


def test_a_closed_port(cli, served):
    labels = f"http://127.0.0.1:{_closed_port()}/inklabels.zarr"
    code, out, err = cli(*_auc(served, labels))
    one_line_error(code, out, err, f"{labels}: cannot be opened: cannot connect to 127.0.0.1")
    assert "connection refused" in err


def test_a_server_that_does_not_answer_in_time(cli, served, monkeypatch):
    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "1")
    url = served[1]
    start = time.monotonic()
    code, out, err = cli(*_auc(served, f"{url}/slow/inklabels.zarr"))
    assert time.monotonic() - start < 6
    one_line_error(code, out, err, f"{url}/slow/inklabels.zarr: cannot be opened: no answer within 1 s")
    assert "SEGSCORE_HTTP_TIMEOUT" in err


@pytest.mark.parametrize("failure, why", [("500", "HTTP 500"), ("stall", "no answer within 1 s")])
def test_a_chunk_that_cannot_be_fetched_mid_run(served, monkeypatch, failure, why):
    from segscore.errors import ScoreError
    from segscore.io.readers import open_zarr

    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "1")
    _, url, state, _ = served
    source = open_zarr(f"{url}/v3/inklabels.zarr", level="2")  # opened while the server is well
    state.chunks = failure
    with pytest.raises(ScoreError) as caught:
        source.read((slice(0, 10), slice(0, 10)))
    message = str(caught.value)
    assert message.startswith(f"{url}/v3/inklabels.zarr: cannot fetch chunk 2/c/0/0: ") and why in message
    assert "\n" not in message


def test_a_chunk_failure_mid_run_on_the_command_line(cli, served):
    _, url, state, _ = served
    state.chunks = "500"
    code, out, err = cli(*_auc(served, f"{url}/v3/inklabels.zarr"))
    one_line_error(code, out, err, "cannot fetch chunk 2/c/")
    assert url in err and "HTTP 500" in err


def test_a_group_without_a_level(cli, served):
    url = served[1]
    code, out, err = cli("objects", f"{url}/truth.zarr", f"{url}/pred.zarr/0")
    one_line_error(code, out, err, f"{url}/truth.zarr is a zarr group, not an array")
    assert f"{url}/truth.zarr/0" in err


@pytest.mark.parametrize("labels, fragment", [
    ("https://example.org/x/map.tif", "only zarr stores are read from URLs"),
    ("gs://bucket/inklabels.zarr", "not gs://"),
    ("https://example.org/x.zarr?sig=1", "query or fragment"),
])
def test_urls_refused_before_any_request(cli, served, labels, fragment):
    one_line_error(*cli(*_auc(served, labels)), fragment)


def test_a_bad_timeout_setting(cli, served, monkeypatch):
    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "soon")
    one_line_error(*cli(*_auc(served, f"{served[1]}/v3/inklabels.zarr")), "SEGSCORE_HTTP_TIMEOUT='soon'")


def test_a_missing_extra_is_named(cli, served, monkeypatch):
    monkeypatch.setitem(sys.modules, "aiohttp", None)  # as if aiohttp were not installed
    one_line_error(*cli(*_auc(served, f"{served[1]}/v3/inklabels.zarr")), "pip install 'segscore[remote]'")


def test_s3_at_a_closed_endpoint(cli, served, monkeypatch):
    pytest.importorskip("s3fs", reason="s3fs (the 'remote' extra) is not installed")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("SEGSCORE_HTTP_TIMEOUT", "1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = cli(*_auc(served, "s3://bucket/inklabels.zarr"))
    one_line_error(code, out, err, "s3://bucket/inklabels.zarr: cannot be opened: ")
    # botocore retries a refused connection with back-off: on a loaded machine its retries can
    # outlast the request's total deadline, which is then the reason given (still one line)
    assert "cannot connect" in err or "did not arrive within" in err, err


def test_opening_a_url_is_lazy_about_imports():
    """`import segscore` and the readers import neither fsspec, aiohttp nor zarr."""
    code = ("import sys, segscore, segscore.io.readers, segscore.io.remote as r\n"
            "assert r.is_url('https://h/x.zarr') and r.is_url('s3://b/x.zarr') and not r.is_url('x.zarr')\n"
            "print(sorted(m for m in ('fsspec', 'aiohttp', 'zarr', 's3fs') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_format_of_a_url_is_zarr():
    from segscore.io.readers import format_of, is_zarr_path

    assert format_of("https://host/path/inklabels.zarr") == "zarr" and is_zarr_path("s3://b/labels.zarr/2")
    assert format_of("https://host/some/store") == "zarr"  # a store need not end in .zarr
