"""Run history: the Parquet store, its queries, per-kernel series and noise-aware bands."""
