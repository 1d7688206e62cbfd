"""The application services: load an aggregate, let it decide, save its events and dispatch
what follows (tables, tournaments and their director, bank auctions, disputes and their
replay, results, the preview, bot play, the in-memory store of the pure engine).

They sit on `SabotApplication` (`application`) over the store; the adapters (HTTP, CLI,
workers) call them. They import the domain and the store, never the projections, the workers
or the API.
"""
