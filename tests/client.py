"""The tests' one HTTP client. `httpx.get` and its kin build a client a call, and with it a TLS
context (30 ms of CPU: the test run's largest single cost); this one is built once. It keeps no
connection and no cookie between calls, so each call stands alone as it did."""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx

CLIENT = httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0),
                      cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))
