"""The read views: standings, recall, rotation, roads, auctions, each a projection of the
events kept caught up by a runner, with its position. They import the domain and the store
(`infra.store`), never the workers or the API.
"""
