// The fit behind a calibrated profile (metrics/simulator.h): the few unknown costs of a
// worker's round, by least squares with every cost >= 0.
#pragma once

#include <vector>

namespace nimbus {

// argmin_{x >= 0} ||A x - y|| for a few unknowns (A's rows): every subset of free unknowns is
// solved by the normal equations, and the best feasible one wins.
std::vector<double> NonNegativeLeastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y);

}  // namespace nimbus
