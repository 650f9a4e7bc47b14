import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CustomerCompanyController } from './customer-company.controller.js';
import { CustomerSeeder } from './customer-seeder.service.js';
import { Customer } from './customer.entity.js';
import { CustomersController } from './customers.controller.js';
import { CustomersService } from './customers.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Customer])],
  controllers: [CustomersController, CustomerCompanyController],
  providers: [CustomersService, CustomerSeeder],
  exports: [CustomersService],
})
export class CustomersModule {}
