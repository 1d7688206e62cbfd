"""The celery workers: decision and bet deadlines, dispute replays, the scheduled audit, the
director, and their broker (Redis, or the embedded one). They call the application services
and may read the projections; they never import the API.
"""
