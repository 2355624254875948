#include "barrage/coordinator/report.h"
