"""The machine around the kit, as its shells use it: loopback ports, progress on stderr.

Above the sans-IO core and beside ``fileio`` (the file edge): the decoding core never imports
it. ``ports`` hands out free TCP ports on 127.0.0.1 (brokers, Spark daemons);
``progress`` is the kit's one progress display for long commands.
"""
