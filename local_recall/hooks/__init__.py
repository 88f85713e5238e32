"""The hooks every coding agent shares. An agent's adapter (claude_code/hooks/events.py) reads
its own event JSON, calls `answers.answer_prompt_command` / `answer_session_start` /
`hand_over_transcript`, and writes its own output shape; `process.run_with_deadline` keeps the
process inside the agent's time limit. Light: the prompt hook imports this on every prompt."""
