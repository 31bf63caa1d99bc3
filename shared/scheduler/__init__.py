"""One scheduling attempt as upstream's scheduleOne makes it (`schedule_one`), FitError's wording
(`fit_error`), the queue's part in an attempt (`queue_rules`), attempt seeds and outcomes."""
