"""The development stack `berth up`, the benchmarks and the tests start: the Tansu broker and
PostgreSQL from their wheels, on free loopback ports under a state directory. It implements no
port of shared/ports.py; the services reach it through the same adapters as any broker and
database."""
