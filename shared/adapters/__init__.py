"""I/O at the edges: Kafka, Postgres, the embedded broker and database, in-memory stand-ins.

Only modules under `shared/adapters/` may import aiokafka, SQLAlchemy, asyncpg or aiohttp; the rest
of `shared/` stays pure.
"""
