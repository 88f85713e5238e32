"""The per-repository background process: process control, schedule, runtime, query socket."""
