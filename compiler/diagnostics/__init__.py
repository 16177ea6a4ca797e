"""Problems as values (Problem, Location, KrcError) and how they are printed."""
