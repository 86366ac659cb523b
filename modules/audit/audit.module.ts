import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/index.js';
import { ControlPlaneAudit } from './control-plane-audit.js';
import { EventHistory } from './event-history.js';
import { HistoryController } from './history.controller.js';
import { RequestHistory } from './request-history.js';

/**
 * The auditor's context: history of the log, of requests and of control-plane changes (admin API), and
 * — through the CLI — verification and export of the hash-chained audit trail.
 */
@Module({
  imports: [AdminModule],
  controllers: [HistoryController],
  providers: [EventHistory, RequestHistory, ControlPlaneAudit],
  exports: [EventHistory, RequestHistory, ControlPlaneAudit],
})
export class AuditModule {}
