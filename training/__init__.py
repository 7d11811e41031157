"""Training, tournaments and the command-line demo of rummy-envs."""
