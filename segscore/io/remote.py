"""Zarr stores on a server: ``http://``, ``https://`` and ``s3://`` URLs, read window by window.

A URL names a zarr array or group the way a local path does (``https://host/x/inklabels.zarr``
with a pyramid level, or ``https://host/x/labels.zarr/2`` for one array inside it). It is opened
read-only through fsspec and zarr-python's :class:`zarr.storage.FsspecStore`, wrapped in
:mod:`segscore.io.zarr_store` (absent chunks counted, decoding capped): the metadata
documents first, then only the chunks a window touches, one request per chunk. Nothing is
downloaded whole and nothing is cached on disk.

Timeouts: ``SEGSCORE_HTTP_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`) for connecting and
for each wait on the server's answer, and twice that for each request from start to end (a
server that trickles an answer a byte at a time is cut off there: aiohttp's total timeout for
http(s), a deadline of the store's own, one timeout later, for s3). ``s3://`` is anonymous (public buckets) unless
``AWS_ACCESS_KEY_ID`` or ``AWS_PROFILE`` is set; ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``
names another endpoint.

Sizes: over http(s) an answer is read through aiohttp's stream, never more than the most its key
can take (a chunk: any encoding of its declared size; a metadata document: 64 MB; the bound comes
from :mod:`segscore.io.zarr_store`): a larger ``Content-Length`` is refused before the body is read,
a body without one (chunked) one byte past the bound.

Refusals are one line naming the URL and the fix: an :class:`~segscore.errors.InputFileError`
when the store or the level is not there or the server cannot be reached, a
:class:`~segscore.errors.ScoreError` when the URL is not a zarr store. A chunk the server does
not have (HTTP 404, S3 NoSuchKey) is the array's fill value, as zarr defines it; a chunk that
cannot be fetched for any other reason (a timeout, a refused connection, HTTP 403 or 500) is a
:class:`RemoteFetchError` naming the URL and the chunk key, never a silent fill.

This module imports neither fsspec, aiohttp nor zarr until a URL is opened (the ``remote`` extra:
``pip install 'segscore[remote]'``).
"""

from __future__ import annotations

import math
import os
import re

from segscore.errors import InputFileError, ScoreError

#: the environment variable holding the timeout in seconds
TIMEOUT_ENV = "SEGSCORE_HTTP_TIMEOUT"
#: seconds to connect, and to wait for each part of an answer, when the variable is not set
DEFAULT_TIMEOUT = 30.0
#: the schemes read as remote zarr stores
SCHEMES = ("http", "https", "s3")
INSTALL = "pip install 'segscore[remote]'"

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_METADATA = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")
#: names that are files segscore reads only from a local disk
_FILE_SUFFIXES = (".tif", ".tiff", ".npy", ".png", ".jpg", ".jpeg", ".nii", ".nii.gz", ".zip")


def is_url(path) -> bool:
    """Whether ``path`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def http_timeout() -> float:
    """The timeout in seconds: ``$SEGSCORE_HTTP_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ScoreError(f"{TIMEOUT_ENV}={raw!r}: not a positive number of seconds; set it to e.g. 30, or unset it")
    return value


class RemoteFetchError(ScoreError):
    """A key of a remote store could not be fetched (a timeout, a refused connection, HTTP 5xx).

    ``url`` is the store's URL, ``key`` the key inside it (a chunk such as ``2/c/0/1``),
    ``reason`` and ``fix`` the two halves of the message."""

    def __init__(self, url: str, key: str, reason: str, fix: str):
        self.url, self.key, self.reason, self.fix = url, key, reason, fix
        kind = "metadata" if key.rsplit("/", 1)[-1] in _METADATA else "chunk"
        super().__init__(f"{url}: cannot fetch {kind} {key}: {reason}; {fix}")


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why(exc: BaseException) -> tuple[str, str]:
    """What went wrong fetching a key, and the fix, for the exceptions aiohttp and s3fs raise."""
    import asyncio  # imported where a URL is read: a local run (is_url) never pays for it

    try:
        timeout = http_timeout()
    except ScoreError:
        timeout = DEFAULT_TIMEOUT
    names = {c.__name__ for c in type(exc).__mro__}
    if type(exc) in (TimeoutError, asyncio.TimeoutError):  # aiohttp's total deadline, not a per-read wait
        return _late(_deadline(timeout))
    if isinstance(exc, TimeoutError) or names & {"ReadTimeoutError", "ConnectTimeoutError"}:
        return (f"no answer within {timeout:g} s", f"check the network, or raise {TIMEOUT_ENV} (now {timeout:g} s)")
    if "ClientConnectorError" in names:  # aiohttp: could not connect (refused, no route, DNS)
        os_error = getattr(exc, "os_error", None)
        if isinstance(os_error, ConnectionRefusedError):
            why = "connection refused"
        elif type(os_error).__name__ == "gaierror" or "ClientConnectorDNSError" in names:
            why = "unknown host"
        else:
            why = _one_line(getattr(os_error, "strerror", None) or os_error or exc, 80)
        host = f"{getattr(exc, 'host', '?')}:{getattr(exc, 'port', '?')}"
        return (f"cannot connect to {host} ({why})", "check the URL's host and port and that the server is up")
    if isinstance(exc, ConnectionRefusedError) or "EndpointConnectionError" in names:
        return ("cannot connect (connection refused)", "check the URL's host and port and that the server is up")
    status = getattr(exc, "status", None)
    if "ClientResponseError" in names and isinstance(status, int):
        message = _one_line(getattr(exc, "message", "") or "", 60)
        said = f"the server answered HTTP {status}" + (f" {message}" if message else "")
        if status in (401, 403):
            return (said, "check that the store is public, or that you have access to it")
        if status >= 500:
            return (said, "the server failed: try again later")
        return (said, "check the URL")
    if isinstance(exc, PermissionError):
        return ("access denied", "check that the bucket is public, or set AWS credentials")
    if "NoCredentialsError" in names:
        return ("no credentials", "unset AWS_PROFILE for a public bucket, or configure AWS credentials")
    return ("the transfer failed", "check the network and the URL, then try again")


#: a request's deadline from start to end, in timeouts (one to connect, one for the transfer);
#: the store's own deadline, a backstop for what the client's does not cover (s3), is one more
DEADLINE_TIMEOUTS = 2


def _deadline(timeout: float | None = None) -> float:
    """Seconds one request may take from start to end. A server that trickles its answer a byte at
    a time passes every per-read wait, not this; one that stalls or refuses is still reported by
    the per-read wait or the connection's own error first."""
    if timeout is None:
        try:
            timeout = http_timeout()
        except ScoreError:
            timeout = DEFAULT_TIMEOUT
    return DEADLINE_TIMEOUTS * timeout


def _backstop() -> float:
    """The store's deadline for one fetch where the client has none (s3): the request's, plus one
    timeout (measured from the call, which includes the client's own start-up)."""
    return _deadline() * (DEADLINE_TIMEOUTS + 1) / DEADLINE_TIMEOUTS


def _late(deadline: float) -> tuple[str, str]:
    return (f"the answer did not arrive within {deadline:g} s", f"check the network, or raise {TIMEOUT_ENV} "
            f"(now {deadline:g} s)")


class _TooLong(Exception):
    """An answer longer than the most its key may take (the message says how it showed)."""


#: bytes read from the socket at a time by :func:`_bounded_fetch`
READ_BLOCK = 1 << 16


def _key_url(path: str, key: str) -> str:
    return f"{path.rstrip('/')}/{key}" if path else key


def _range_header(byte_range) -> str:
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

    if isinstance(byte_range, RangeByteRequest):
        return f"bytes={byte_range.start}-{byte_range.end - 1}"
    if isinstance(byte_range, OffsetByteRequest):
        return f"bytes={byte_range.offset}-"
    if isinstance(byte_range, SuffixByteRequest):
        return f"bytes=-{byte_range.suffix}"
    raise ValueError(f"unexpected byte range {byte_range!r}")


def _slice_whole(body: bytes, byte_range) -> bytes:
    """The range of a whole object (a server that ignored the Range header answered 200)."""
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest

    if isinstance(byte_range, RangeByteRequest):
        return body[byte_range.start:byte_range.end]
    if isinstance(byte_range, OffsetByteRequest):
        return body[byte_range.offset:]
    return body[len(body) - byte_range.suffix:] if byte_range.suffix else b""


async def _bounded_fetch(fs, url: str, byte_range, limit: int) -> bytes | None:
    """The body at ``url`` (None for HTTP 404), read through ``fs``'s aiohttp session (its timeouts
    apply) without ever holding more than ``limit`` bytes of it; raises :class:`_TooLong`."""
    session = await fs.set_session()
    options = dict(fs.kwargs)
    headers = dict(options.pop("headers", None) or {})
    headers["Accept-Encoding"] = "identity"  # the length declared is the length read
    if byte_range is not None:
        headers["Range"] = _range_header(byte_range)
    async with session.get(fs.encode_url(url), headers=headers, **options) as r:
        if r.status == 404:
            return None
        r.raise_for_status()
        declared = r.content_length
        if declared is not None and declared > limit:
            r.close()  # nothing of the body is read
            raise _TooLong(f"the server declares {declared:,} bytes (Content-Length), more than any encoding of it "
                           f"takes ({limit:,})")
        body = bytearray()
        async for block in r.content.iter_chunked(READ_BLOCK):
            body += block
            if len(body) > limit:
                r.close()
                raise _TooLong(f"the server sent more than {limit:,} bytes, the most any encoding of it takes")
        whole = byte_range is not None and r.status == 200
    return _slice_whole(bytes(body), byte_range) if whole else bytes(body)


def _make_store_class():
    """zarr's FsspecStore, whose fetches name the URL and key when they fail or outlast the deadline."""
    import asyncio

    from zarr.storage import FsspecStore

    class GuardedStore(FsspecStore):
        """A read-only :class:`zarr.storage.FsspecStore` that refuses a failed fetch in one line.

        A missing key (FileNotFoundError) is still a missing key, so a missing chunk reads as
        the fill value; any other failure, and a request that takes longer than the timeout from
        start to end, raises :class:`RemoteFetchError`."""

        #: whether a metadata document came back as an HTML page (a site, not a store)
        saw_html = False

        @property
        def url(self) -> str:
            return self.fs.unstrip_protocol(self.path).rstrip("/")

        def _backstop(self) -> float | None:
            """The store's own deadline for one fetch: none over http(s), where aiohttp's total
            timeout ends a request; for s3, the request's deadline plus one timeout."""
            return None if self.url.lower().startswith(("http://", "https://")) else _backstop()

        async def get(self, key, prototype, byte_range=None):
            deadline = self._backstop()
            try:
                value = await asyncio.wait_for(super().get(key, prototype, byte_range), deadline)
            except ScoreError:
                raise
            except asyncio.TimeoutError as exc:  # the store's deadline, or aiohttp's
                raise RemoteFetchError(self.url, key, *(_why(exc) if deadline is None else _late(deadline))) \
                    from None
            except Exception as exc:  # noqa: BLE001 - every transport failure is the same refusal
                raise RemoteFetchError(self.url, key, *_why(exc)) from None
            self._note_html(key, value)
            return value

        def _note_html(self, key, value) -> None:
            if value is not None and key.rsplit("/", 1)[-1] in _METADATA:
                head = value.to_bytes()[:256].lstrip().lower()
                if head.startswith((b"<!doctype html", b"<html", b"<head", b"<?xml")):
                    self.saw_html = True

        async def get_bounded(self, key, prototype, byte_range=None, *, limit: int):
            """:meth:`get`, reading at most ``limit`` bytes of the answer (http and https): an answer
            whose Content-Length is larger is refused before its body is read, one that sends more
            (chunked, or with no length) is refused at ``limit + 1`` bytes. The capped store
            (:mod:`segscore.io.zarr_store`) calls this with the most any encoding of the key takes.
            Over s3 it is :meth:`get` (the answer's length is the object's)."""
            if self._backstop() is not None:
                return await self.get(key, prototype, byte_range)
            try:
                data = await _bounded_fetch(self.fs, _key_url(self.path, key), byte_range, limit)
            except ScoreError:
                raise
            except _TooLong as exc:
                raise RemoteFetchError(self.url, key, str(exc), "the store is corrupt or hostile: re-write the "
                                       "store, or check the URL") from None
            except Exception as exc:  # noqa: BLE001 - every transport failure is the same refusal
                raise RemoteFetchError(self.url, key, *_why(exc)) from None
            value = None if data is None else prototype.buffer.from_bytes(data)
            self._note_html(key, value)
            return value

        async def get_partial_values(self, prototype, key_ranges):
            key_ranges = list(key_ranges)
            keys = ", ".join(sorted({k for k, _ in key_ranges})) or "?"
            deadline = self._backstop()
            try:
                return await asyncio.wait_for(super().get_partial_values(prototype, key_ranges), deadline)
            except ScoreError:
                raise
            except asyncio.TimeoutError as exc:
                raise RemoteFetchError(self.url, keys, *(_why(exc) if deadline is None else _late(deadline))) \
                    from None
            except Exception as exc:  # noqa: BLE001
                raise RemoteFetchError(self.url, keys, *_why(exc)) from None

    GuardedStore.__module__ = __name__
    GuardedStore.__qualname__ = "GuardedStore"
    return GuardedStore


def __getattr__(name):  # the store class is built on first use, so importing this module stays light
    if name == "GuardedStore":
        cls = globals().get("_GuardedStore") or _make_store_class()  # built once: pickle finds it by name (dask workers)
        globals()["_GuardedStore"] = globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _missing(url: str, what: str) -> ScoreError:
    return ScoreError(f"{url}: reading {what} needs the 'remote' extra; {INSTALL}")


def _filesystem(url: str, scheme: str, timeout: float, *, asynchronous: bool = True):
    """An fsspec filesystem for ``scheme`` with the timeout set (asynchronous, as zarr's store needs)."""
    try:
        import fsspec  # noqa: F401
    except ImportError:
        raise _missing(url, "remote zarr stores (fsspec)") from None
    if scheme in ("http", "https"):
        try:
            import aiohttp
        except ImportError:
            raise _missing(url, "http(s) URLs (aiohttp, which fsspec's HTTP filesystem uses)") from None
        from fsspec.implementations.http import HTTPFileSystem

        limits = aiohttp.ClientTimeout(total=_deadline(timeout), connect=timeout, sock_connect=timeout,
                                       sock_read=timeout)
        return HTTPFileSystem(asynchronous=asynchronous, client_kwargs={"timeout": limits, "trust_env": True})
    try:
        import s3fs
    except ImportError:
        raise _missing(url, "s3:// URLs (s3fs)") from None
    options = {"anon": not (os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE")),
               "asynchronous": asynchronous,
               "config_kwargs": {"connect_timeout": timeout, "read_timeout": timeout,
                                 "retries": {"max_attempts": 2, "mode": "standard"}}}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        options["endpoint_url"] = endpoint
    return s3fs.S3FileSystem(**options)


def check_url(url: str) -> str:
    """``url`` without a trailing slash, refused (before any network use) when segscore cannot read it."""
    scheme = _URL.match(url).group(1).lower()
    if scheme not in SCHEMES:
        raise ScoreError(f"{url}: segscore reads zarr stores from http://, https:// and s3:// URLs, not {scheme}://; "
                         f"give one of those or a local path")
    if "?" in url or "#" in url:
        raise ScoreError(f"{url}: a URL with a query or fragment cannot name a zarr store (its keys are appended "
                         f"to the path); give the store's plain URL")
    url = url.rstrip("/")
    if url.lower().endswith(_FILE_SUFFIXES):
        raise ScoreError(f"{url}: only zarr stores are read from URLs; download the file and give its local path")
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]+", url):
        raise ScoreError(f"{url}: no host or bucket in the URL; give e.g. https://host/path/labels.zarr")
    return url


def _keys(group) -> list[str] | None:
    """A group's member names, or None where the server cannot list them."""
    try:
        return sorted(group.keys())
    except Exception:  # noqa: BLE001 - plain HTTP servers and closed buckets do not list
        return None


def _not_found(url: str) -> ScoreError:
    """The refusal for a URL with no zarr metadata under it: nothing there, or not a store."""
    try:  # asked through a synchronous filesystem: the store's is bound to zarr's event loop
        there = bool(_filesystem(url, _URL.match(url).group(1).lower(), http_timeout(), asynchronous=False).exists(url))
    except Exception:  # noqa: BLE001 - the probe only refines the message
        there = False
    if there:
        return ScoreError(f"{url}: not a zarr store (there is a page or file there, but no zarr.json, .zarray or "
                          f".zgroup under it); point at the .zarr folder itself")
    how = "HTTP 404 for zarr.json, .zarray and .zgroup" if url.lower().startswith("http") \
        else "no zarr.json, .zarray or .zgroup key"
    return InputFileError(f"{url}: no zarr store there ({how}); check the URL")


def open_remote(url: str, *, level: str | None = None, what: str = "array"):
    """The zarr array at ``url``, or the array ``level`` inside the group at ``url``, as a source.

    Read-only and lazy: opening fetches the metadata documents; each window fetches the chunks
    it touches. Refusals as the module docstring lists them.
    """
    url = check_url(url)
    timeout = http_timeout()
    scheme = _URL.match(url).group(1).lower()
    fs = _filesystem(url, scheme, timeout)
    import warnings

    import zarr
    from zarr.errors import NodeNotFoundError, ZarrUserWarning

    from segscore.io.sources import ZarrSource
    from segscore.io.zarr_store import capped

    from fsspec.core import strip_protocol

    path = url if scheme in ("http", "https") else strip_protocol(url)
    guarded = __getattr__("GuardedStore")(fs=fs, path=path, read_only=True)
    store = capped(guarded, url)
    try:
        with warnings.catch_warnings():  # e.g. "both zarr.json and .zarray exist": refused below, or harmless
            warnings.simplefilter("ignore", ZarrUserWarning)
            node = zarr.open(store, mode="r")
    except RemoteFetchError as exc:
        raise InputFileError(f"{url}: cannot be opened: {exc.reason}; {exc.fix}") from None
    except (FileNotFoundError, NodeNotFoundError, KeyError):
        raise _not_found(url) from None
    except ScoreError:
        raise
    except Exception:  # noqa: BLE001 - zarr-python could not parse what the server sent
        sent = "an HTML page" if guarded.saw_html else "something else"
        raise ScoreError(f"{url}: not a zarr store (the server sent {sent} for its zarr metadata); point at the "
                         f".zarr folder itself") from None
    try:
        if hasattr(node, "keys"):  # a group: the level inside it
            if level is None:
                keys = _keys(node)
                example = keys[0] if keys else "KEY"
                listed = f" (keys: {keys})" if keys is not None else ""
                raise ScoreError(f"{url} is a zarr group, not an array; name one inside it, e.g. "
                                 f"{url}/{example}{listed}")
            try:
                child = node[str(level)]
            except KeyError:
                keys = _keys(node)
                listed = f"; levels: {keys}" if keys is not None else f" (nothing at {url}/{level})"
                raise InputFileError(f"{url}: no level {str(level)!r}{listed}") from None
            if hasattr(child, "keys"):
                raise ScoreError(f"{url}/{level} is a group, not an array")
            node = child
        _ = node.dtype, node.chunks
    except RemoteFetchError as exc:
        raise InputFileError(f"{url}: cannot be opened: {exc.reason}; {exc.fix}") from None
    store.check_array(node.path)
    return ZarrSource(node, url, store=store)
