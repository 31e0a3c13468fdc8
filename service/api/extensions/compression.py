"""gzip on the way out (the standard library's), for clients that send `Accept-Encoding: gzip`.

The API's JSON answers to GET from 1 KiB on are compressed when they carry no ETag (a strong ETag names one
encoding of a body, and If-Match compares strongly: those answers go as they are). The page's files
(service/web) are compressed once per file version, with a weak ETag so that revalidating still gets a 304.
`Vary: Accept-Encoding` on everything that could be either."""

from __future__ import annotations

import gzip

from flask import Flask, Request, Response, request

MIN_BYTES = 1024
JSON_TYPES = ("application/json", "application/problem+json")
API_LEVEL = 6  # per request: zlib's default speed/size balance
FILE_LEVEL = 9  # once per file version, kept: the slowest level costs nothing per request
_files: dict[tuple[str, str], bytes] = {}  # (path, ETag) → gzip bytes; the page's ~40 files
_FILES_MAX = 256


def accepts_gzip(req: Request) -> bool:
    return req.accept_encodings.quality("gzip") > 0


def gzip_body(response: Response, level: int, cache_key: tuple[str, str] | None = None) -> Response:
    """Replace the body by its gzip (from the cache when `cache_key` is given and known); smaller bodies stay."""
    response.direct_passthrough = False
    body = response.get_data()
    if len(body) < MIN_BYTES:
        return response
    packed = _files.get(cache_key) if cache_key else None
    if packed is None:
        packed = gzip.compress(body, compresslevel=level, mtime=0)
        if cache_key and len(_files) < _FILES_MAX:
            _files[cache_key] = packed
    response.set_data(packed)
    response.headers["Content-Encoding"] = "gzip"
    return response


def compress_file(response: Response) -> Response:
    """A static file (200 or 304): Vary, gzip when accepted, the ETag weakened for the gzip variant."""
    response.vary.add("Accept-Encoding")
    if "Content-Encoding" in response.headers or not accepts_gzip(request):
        return response
    etag, _weak = response.get_etag()
    if response.status_code == 200:
        gzip_body(response, FILE_LEVEL, (request.path, etag) if etag else None)
    if etag and (response.status_code == 304 or response.headers.get("Content-Encoding") == "gzip"):
        response.set_etag(etag, weak=True)
    return response


def _compress_api_json(response: Response) -> Response:
    if request.method != "GET" or response.mimetype not in JSON_TYPES or response.is_streamed:
        return response
    if "ETag" in response.headers or "Content-Encoding" in response.headers:
        return response
    response.vary.add("Accept-Encoding")
    if response.status_code == 200 and accepts_gzip(request):
        gzip_body(response, API_LEVEL)
    return response


def init_app(app: Flask) -> None:
    app.after_request(_compress_api_json)
