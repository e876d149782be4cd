"""Results out: JSON and CSV, the page's tables and sentences, and the CLI's results file."""
