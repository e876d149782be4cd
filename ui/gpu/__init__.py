"""The Your GPU page's panels: device card, live telemetry, benchmark runner, results, own checkpoint.

Each panel is Streamlit only; the decisions behind it (presets, reference bandwidth, export
payload, the typed job result) live in core/gpu/.
"""
