"""Secrets and <private> spans: found and removed before anything is written or sent."""
