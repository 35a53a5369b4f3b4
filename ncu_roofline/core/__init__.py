"""The vocabulary every layer shares: errors, column and term names, the launch table, statuses, kernel names."""
