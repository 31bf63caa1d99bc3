"""`berth chaos`: a run at scale with services, the broker and the database killed at seeded
moments, then the invariants checked (see `run`)."""
