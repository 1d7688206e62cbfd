"""The adapters people and programs use: the HTTP API and its pages (litestar), and the
`sabot` command line (`api.cli`, `api.commands`). Thin: each route or command calls an
application service. The top layer: it may import everything below it.
"""
