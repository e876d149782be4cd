"""The load test: simulated readers speaking Streamlit's websocket protocol, one real Chromium, and the server they load; run as `python -m bench.load`."""
