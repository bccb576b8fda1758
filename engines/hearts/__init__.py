"""Four-player Hearts: rules, rule-based and Monte Carlo agents, FALCON learners, nu-SVR risk."""
