#include "barrage/common/histogram.h"
