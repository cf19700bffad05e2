"""The machine around the kit, as its shells use it: loopback ports, progress on stderr,
child processes in sessions of their own. Standard library only.

Above the sans-IO core and beside ``fileio`` (the file edge): the decoding core never imports
it. ``ports`` hands out free TCP ports on 127.0.0.1 (brokers, Spark daemons);
``progress`` is the kit's one progress display for long commands (and ``Status``, a
status-line callback); ``sessions`` supervises child processes each in a session of its own
(signal the group, terminate with a grace period, reap only once the session is empty);
``lifetime`` is what a ``with`` block does to the kit's long-lived things (start, close, stop).
"""
