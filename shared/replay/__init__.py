"""Replay and explain: the log folded back into the views decisions were made on (`rebuild`,
`history`), every decision made again and compared (`engine`, `diff`), one attempt explained
(`explain`), the cluster at a moment (`at_time`) and the export format."""
