"""Writer: a small Hudi table writer for samples, benchmarks and property tests."""
