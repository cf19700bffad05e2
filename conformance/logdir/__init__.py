"""logdir"""
