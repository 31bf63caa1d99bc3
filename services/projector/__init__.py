"""The projector: applies every event to the Postgres read model and event store, exactly once."""
